import { chmod, copyFile, mkdir, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DRIVERS_DIR } from './sandbox-command.ts';

/**
 * The folders of one provider instance under DATA_DIR: `<DATA_DIR>/code-interpreter/<instance>/` with a copy of
 * the interpreter drivers and one folder per session. Sandboxes run as uids of their own, which must be able to
 * walk down to their session folder: DATA_DIR and these folders get the search bit for others (0711), which
 * lets a uid that knows a name reach it but list nothing; DATA_DIR's own files stay 0600 and unreadable.
 */
export async function prepareInstanceDirs(
  dataDir: string,
  instance: string,
  walkable: boolean,
): Promise<{ root: string; drivers: string }> {
  const root = join(dataDir, 'code-interpreter', instance);
  const drivers = join(root, '.drivers');
  await mkdir(drivers, { recursive: true, mode: 0o700 });
  if (walkable) for (const d of [dataDir, dirname(root), root]) await chmod(d, 0o711);
  await chmod(drivers, walkable ? 0o755 : 0o700);
  // A copy, because the checkout itself may sit where a sandbox uid cannot read (e.g. under /root).
  for (const f of await readdir(DRIVERS_DIR)) {
    await copyFile(join(DRIVERS_DIR, f), join(drivers, f));
    await chmod(join(drivers, f), 0o644);
  }
  return { root, drivers };
}
