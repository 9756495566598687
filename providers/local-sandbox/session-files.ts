import { constants } from 'node:fs';
import { chown, type FileHandle, lstat, mkdir, open, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** Name and modification stamp of every regular file at the top of a session folder. */
export type Snapshot = Map<string, string>;

/**
 * A session's folder on the host. Code in the sandbox owns it and may put symlinks there, so Switchboard never
 * follows a link when it reads or writes a file for the API (O_NOFOLLOW), and lists only regular files.
 */
export class SessionFiles {
  constructor(
    readonly dir: string,
    private readonly owner?: { uid: number; gid: number },
  ) {}

  async create(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    if (this.owner) await chown(this.dir, this.owner.uid, this.owner.gid);
  }

  async remove(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }

  async snapshot(): Promise<Snapshot> {
    const out: Snapshot = new Map();
    for (const entry of await readdir(this.dir, { withFileTypes: true }).catch(() => [])) {
      if (!entry.isFile()) continue;
      const st = await lstat(join(this.dir, entry.name)).catch(() => undefined);
      if (st) out.set(entry.name, `${st.mtimeMs}:${st.size}`);
    }
    return out;
  }

  /** Files new or changed since `before`. */
  async changedSince(before: Snapshot): Promise<string[]> {
    const after = await this.snapshot();
    return [...after]
      .filter(([name, stamp]) => before.get(name) !== stamp)
      .map(([name]) => name)
      .sort();
  }

  async write(name: string, data: Buffer): Promise<void> {
    const fh = await open(
      join(this.dir, name),
      constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW,
      0o600,
    );
    try {
      await fh.writeFile(data);
      if (this.owner) await fh.chown(this.owner.uid, this.owner.gid);
    } finally {
      await fh.close();
    }
  }

  /** The file's bytes; undefined when it is missing, a link or not a regular file. */
  async read(name: string): Promise<Buffer | undefined> {
    let fh: FileHandle;
    try {
      fh = await open(join(this.dir, name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch {
      return undefined;
    }
    try {
      if (!(await fh.stat()).isFile()) return undefined;
      return await fh.readFile();
    } finally {
      await fh.close();
    }
  }
}
