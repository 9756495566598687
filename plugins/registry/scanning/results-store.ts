import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { unavailable } from '../../../core/errors.ts';
import type { Collection, Store } from '../../../core/store-types.ts';
import type { Subject } from './settings.ts';

/** Folder of each subject under DATA_DIR (spec 2.6; skills have no layout there, so they follow the agents'). */
export const FOLDERS: Record<Subject, string> = {
  server: 'security_scans',
  agent: 'agent_security_scans',
  skill: 'skill_security_scans',
};

/** A file-name-safe form of a server URL or item path (`http://h:8/mcp` -> `http___h_8_mcp`). */
export function fileKey(s: string): string {
  return (
    s
      .replace(/^\/+/, '')
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .slice(0, 200) || '_'
  );
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** `YYYY-MM-DD` and `YYYYMMDD_HHMMSS` of a timestamp, in UTC. */
export function stamps(iso: string): { day: string; compact: string } {
  const d = new Date(iso);
  const day = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const compact = `${day.replace(/-/g, '')}_${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}`;
  return { day, compact };
}

/**
 * Scan results: the latest per item and a dated archive, as files under
 * DATA_DIR (spec 2.6 layout). With Redis as the core store the latest result
 * is kept there too and read from there, so every replica answers the same.
 */
export class ScanResults {
  private readonly shared?: Collection<Record<string, unknown>>;

  constructor(
    private readonly dataDir: string,
    store: Store,
  ) {
    if (store.backend === 'redis') this.shared = store.collection('registry_security_scans');
  }

  latestPath(kind: Subject, key: string): string {
    return join(this.dataDir, FOLDERS[kind], `${fileKey(key)}.json`);
  }

  /** Writes the latest file (atomically, by rename) and a new archive file; returns the archive's path. */
  async save(kind: Subject, key: string, report: Record<string, unknown>, at: string): Promise<string> {
    const dir = join(this.dataDir, FOLDERS[kind]);
    const { day, compact } = stamps(at);
    const text = `${JSON.stringify(report, null, 2)}\n`;
    await mkdir(join(dir, day), { recursive: true });
    const latest = this.latestPath(kind, key);
    const tmp = `${latest}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(tmp, text);
    await rename(tmp, latest);
    // Two scans within one second keep both archives: the second gets a counter.
    let archive = join(dir, day, `scan_${fileKey(key)}_${compact}.json`);
    for (let i = 1; existsSync(archive); i++) archive = join(dir, day, `scan_${fileKey(key)}_${compact}_${i}.json`);
    await writeFile(archive, text, { flag: 'wx' }).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
      archive = join(dir, day, `scan_${fileKey(key)}_${compact}_${process.pid}_${Date.now()}.json`);
      await writeFile(archive, text);
    });
    if (this.shared) {
      try {
        await this.shared.set(`${kind}:${key}`, report);
      } catch (err) {
        throw unavailable('SB_ERR_STORE_UNAVAILABLE', 'The core store (Redis) did not keep the scan result', err);
      }
    }
    return archive;
  }

  async latest(kind: Subject, key: string): Promise<Record<string, unknown> | undefined> {
    if (this.shared) {
      try {
        const v = await this.shared.get(`${kind}:${key}`);
        if (v) return v;
      } catch (err) {
        throw unavailable('SB_ERR_STORE_UNAVAILABLE', 'The core store (Redis) did not answer for the scan result', err);
      }
    }
    try {
      return JSON.parse(await readFile(this.latestPath(kind, key), 'utf8')) as Record<string, unknown>;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }
}
