import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { freePort } from '../fixtures/free-port.ts';

const require = createRequire(import.meta.url);

// Re-exported: the registry tests take it from here.
export { freePort };

export interface RunningServer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    process.kill(child.pid!, 'SIGTERM');
    setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL');
    }, 2000).unref();
  });
}

/**
 * The reference MCP test server (@modelcontextprotocol/server-everything) in a
 * child process on a free loopback port; `url` is its MCP endpoint.
 */
export async function startEverything(transport: 'streamableHttp' | 'sse'): Promise<RunningServer> {
  const pkg = dirname(require.resolve('@modelcontextprotocol/server-everything/package.json'));
  const port = await freePort();
  const child = spawn(process.execPath, [join(pkg, 'dist/index.js'), transport], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`server-everything did not start: ${buf}`)), 15000);
    child.stderr!.on('data', (d: Buffer) => {
      buf += d.toString();
      if (/listening|running on port/i.test(buf)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited (${code}): ${buf}`)));
  });
  child.stderr!.resume();
  const path = transport === 'sse' ? '/sse' : '/mcp';
  return { url: `http://127.0.0.1:${port}${path}`, pid: child.pid!, stop: () => stopChild(child) };
}
