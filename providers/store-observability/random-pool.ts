import { randomFillSync } from 'node:crypto';

/**
 * Random digits come from a pool of CSPRNG output kept as hex text, refilled
 * 256 ids at a time: one randomBytes(16) call per id was half of what
 * ingesting an agent's trace cost, and copying a pooled Buffer and hex-encoding
 * it per id was still ~2 us of the ~13 us an ingest took (profiles in
 * bench/RESULTS.md). A slice of a string is a cheap view; each digit is used once.
 */
const POOL_BYTES = 16 * 256;
const poolBuf = Buffer.alloc(POOL_BYTES);
let poolHex = '';
let poolAt = 0;
/** `n` random hex digits (at most 2 * POOL_BYTES). */
export function randomDigits(n: number): string {
  if (poolAt + n > poolHex.length) {
    randomFillSync(poolBuf);
    poolHex = poolBuf.toString('hex');
    poolAt = 0;
  }
  return poolHex.slice(poolAt, (poolAt += n));
}
