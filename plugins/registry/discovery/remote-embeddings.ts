import type { EmbeddingsConfig } from './config.ts';
import { type Embedder, unit } from './embedder.ts';

/**
 * An OpenAI-compatible /embeddings endpoint (OpenAI, Azure, vLLM, Ollama,
 * LiteLLM...). Vectors are asked in batches ahead of a search (`fetch`) and
 * kept by text, so the index itself stays synchronous: a doc whose vector has
 * not arrived yet is ranked by what else is known about it until it has.
 */
export class RemoteEmbeddings {
  private readonly cache = new Map<string, Float32Array>();
  /** The endpoint's last failure, for search_mode and logs (never its key). */
  lastError?: string;
  /** After a failure the endpoint is left alone for a while: a search should not wait out a timeout each time. */
  private restUntil = 0;
  static readonly REST_MS = 30_000;

  constructor(
    readonly config: EmbeddingsConfig,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  vector(text: string): Float32Array | undefined {
    return this.cache.get(text);
  }

  missing(texts: Iterable<string>): string[] {
    return [...new Set(texts)].filter((t) => !this.cache.has(t));
  }

  /** Fetches the vectors not yet known: 'ok' when all arrived, 'failed' now, 'resting' after a recent failure. */
  async fetch(texts: string[]): Promise<'ok' | 'failed' | 'resting'> {
    const todo = this.missing(texts);
    if (todo.length === 0) return 'ok';
    if (Date.now() < this.restUntil) return 'resting';
    const size = this.config.batch_size;
    try {
      for (let i = 0; i < todo.length; i += size) {
        const batch = todo.slice(i, i + size);
        const vectors = await this.call(batch);
        batch.forEach((t, j) => {
          const v = vectors[j];
          if (v) this.remember(t, v);
        });
      }
      this.lastError = undefined;
      return 'ok';
    } catch (err) {
      this.lastError = (err as Error).message;
      this.restUntil = Date.now() + RemoteEmbeddings.REST_MS;
      return 'failed';
    }
  }

  private remember(text: string, v: Float32Array): void {
    if (this.cache.size >= 200_000) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(text, v);
  }

  private async call(input: string[]): Promise<Float32Array[]> {
    const { url, model, api_key, timeout_ms, dimensions } = this.config;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (api_key) headers.authorization = `Bearer ${api_key}`;
    const endpoint = `${url.replace(/\/+$/, '')}/embeddings`;
    const res = await this.fetchImpl(endpoint, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model, input, encoding_format: 'float' }),
      signal: AbortSignal.timeout(timeout_ms),
    });
    if (!res.ok) throw new Error(`embeddings endpoint ${endpoint} answered ${res.status}`);
    const body = (await res.json()) as { data?: { embedding?: number[]; index?: number }[] };
    const out: Float32Array[] = [];
    for (const [i, d] of (body.data ?? []).entries()) {
      const e = d.embedding;
      if (!Array.isArray(e) || e.length !== dimensions)
        throw new Error(
          `embeddings endpoint ${endpoint} returned a vector of ${Array.isArray(e) ? e.length : 'no'} dimensions, config says ${dimensions}`,
        );
      const v = unit(Float32Array.from(e));
      if (v) out[d.index ?? i] = v;
    }
    return out;
  }
}

/**
 * The vector discovery indexes: the local word vectors, the endpoint's, or
 * both side by side, each half scaled by 1/sqrt(2) so the cosine of the joined
 * vectors is the mean of the two cosines.
 */
export class CombinedEmbedder implements Embedder {
  readonly id: string;
  readonly dims: number;

  constructor(
    private readonly local: Embedder | undefined,
    private readonly remote: RemoteEmbeddings,
  ) {
    const r = remote.config;
    this.id = local && r.mode === 'join' ? `${local.id}+${r.model}` : r.model;
    this.dims = (r.mode === 'join' ? (local?.dims ?? 0) : 0) + r.dimensions;
  }

  embed(text: string): Float32Array | undefined {
    const joined = this.remote.config.mode === 'join' && this.local;
    const l = joined ? this.local!.embed(text) : undefined;
    const r = this.remote.vector(text);
    if (!l && !r) return undefined;
    const v = new Float32Array(this.dims);
    const half = joined ? Math.SQRT1_2 : 1;
    const offset = joined ? this.local!.dims : 0;
    if (l) for (let i = 0; i < l.length; i++) v[i] = l[i]! * half;
    if (r) for (let i = 0; i < r.length; i++) v[offset + i] = r[i]! * half;
    return v;
  }
}
