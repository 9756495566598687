import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Branch, MemoryEvent, MemoryRecord } from '../../core/primitives/memory.ts';

/** Everything the provider keeps, as it sits in the JSON file. */
export interface Doc {
  version: 1;
  /** namespace -> key -> record */
  records: Record<string, Record<string, MemoryRecord>>;
  /** `actor\u0000session` -> events, oldest first (branch events carry `branch`) */
  events: Record<string, MemoryEvent[]>;
  /** `actor\u0000session` -> branches */
  branches: Record<string, Branch[]>;
}

const empty = (): Doc => ({ version: 1, records: {}, events: {}, branches: {} });

/**
 * The JSON file. Reads come from memory; every change rewrites the file through
 * a temporary file and a rename, so a crash leaves the old or the new version,
 * never half of one. Writes are serialised so two changes cannot interleave.
 */
export class JsonDocument {
  readonly data: Doc;
  private queue: Promise<void> = Promise.resolve();

  constructor(readonly file: string) {
    this.data = JsonDocument.load(file);
  }

  private static load(file: string): Doc {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return empty();
      throw err;
    }
    const doc = JSON.parse(text) as Doc;
    if (doc.version !== 1) throw new Error(`${file}: unknown format version ${String(doc.version)}`);
    return doc;
  }

  /** Apply a change in memory, then persist it before the caller's promise resolves. */
  async change<T>(fn: (doc: Doc) => T): Promise<T> {
    // Async so a refusal thrown by `fn` reaches the caller as a rejected promise.
    const result = fn(this.data);
    const snapshot = JSON.stringify(this.data);
    const write = this.queue.then(() => {
      mkdirSync(dirname(this.file), { recursive: true });
      const tmp = `${this.file}.${process.pid}.tmp`;
      writeFileSync(tmp, snapshot);
      renameSync(tmp, this.file);
    });
    this.queue = write.catch(() => {});
    return write.then(() => result);
  }
}
