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
 * DATA_DIR in the spec 2.6 layout (servers named by their URL, agents and
 * skills by their path). The latest result is also kept in the core store,
 * keyed by item path: two servers behind one URL share a file name, never a
 * result, and with Redis as the store every replica answers the same.
 */
export class ScanResults {
  private readonly latestByPath: Collection<Record<string, unknown>>;

  constructor(
    private readonly dataDir: string,
    store: Store,
  ) {
    this.latestByPath = store.collection('registry_security_scans');
  }

  latestPath(kind: Subject, fileName: string): string {
    return join(this.dataDir, FOLDERS[kind], `${fileKey(fileName)}.json`);
  }

  /**
   * Writes the latest file (atomically, by rename), a new archive file and the
   * store entry; returns the archive's path. `fileName` is the spec's name
   * (the server URL, the agent or skill path).
   */
  async save(
    kind: Subject,
    path: string,
    fileName: string,
    report: Record<string, unknown>,
    at: string,
  ): Promise<string> {
    const dir = join(this.dataDir, FOLDERS[kind]);
    const { day, compact } = stamps(at);
    const text = `${JSON.stringify(report, null, 2)}\n`;
    await mkdir(join(dir, day), { recursive: true });
    const latest = this.latestPath(kind, fileName);
    const tmp = `${latest}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(tmp, text);
    await rename(tmp, latest);
    // Two scans within one second keep both archives: the second gets a counter.
    const stem = `scan_${fileKey(fileName)}_${compact}`;
    let archive = join(dir, day, `${stem}.json`);
    for (let i = 1; existsSync(archive); i++) archive = join(dir, day, `${stem}_${i}.json`);
    await writeFile(archive, text, { flag: 'wx' }).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
      archive = join(dir, day, `${stem}_${process.pid}_${Date.now()}.json`);
      await writeFile(archive, text);
    });
    try {
      await this.latestByPath.set(`${kind}:${path}`, report);
    } catch (err) {
      throw unavailable('SB_ERR_STORE_UNAVAILABLE', 'The core store did not keep the scan result', err);
    }
    return archive;
  }

  /** The latest result of an item: from the store, or from its file when the store has none (results written before). */
  async latest(kind: Subject, path: string, fileName: string): Promise<Record<string, unknown> | undefined> {
    let stored: Record<string, unknown> | undefined;
    try {
      stored = await this.latestByPath.get(`${kind}:${path}`);
    } catch (err) {
      throw unavailable('SB_ERR_STORE_UNAVAILABLE', 'The core store did not answer for the scan result', err);
    }
    if (stored) return stored;
    let fromFile: Record<string, unknown>;
    try {
      fromFile = JSON.parse(await readFile(this.latestPath(kind, fileName), 'utf8')) as Record<string, unknown>;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    // A server file is named by URL: it is this server's only if it says so.
    const owner = fromFile.server_path ?? fromFile.agent_path ?? fromFile.skill_path;
    return owner === path ? fromFile : undefined;
  }
}
