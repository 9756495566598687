import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { CappedCapture } from './output-capture.ts';
import type { Launch } from './sandbox-command.ts';

export interface CellOutcome {
  stdout: string;
  stderr: string;
  exitCode: number;
  result: string | null;
  error: string | null;
  truncated: boolean;
  /** The interpreter was killed (timeout) or died: its variables are gone. */
  restarted: boolean;
}

interface Pending {
  stdout: CappedCapture;
  stderr: CappedCapture;
  reply?: { result: string | null; error: string | null };
  settle: (o: CellOutcome) => void;
  timer: NodeJS.Timeout;
}

/**
 * A warm interpreter driven over a socket on fd 3 (drivers/*). One cell at a time: callers queue. The process runs
 * in its own process group, so a timeout kills it and everything it started.
 */
export class Repl {
  private readonly child: ChildProcess;
  private readonly ctl: Duplex;
  private pending: Pending | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private ctlBuffer = '';
  exited = false;

  constructor(
    launch: Launch,
    private readonly maxOutputBytes: number,
  ) {
    this.child = spawn(launch.command, launch.args, {
      cwd: launch.cwd,
      env: launch.env,
      uid: launch.uid,
      gid: launch.gid,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    this.ctl = this.child.stdio[3] as Duplex;
    this.child.stdout!.on('data', (c: Buffer) => this.pending?.stdout.push(c) && this.maybeSettle());
    this.child.stderr!.on('data', (c: Buffer) => this.pending?.stderr.push(c) && this.maybeSettle());
    this.ctl.on('data', (c: Buffer) => {
      this.ctlBuffer += c.toString('utf8');
      const i = this.ctlBuffer.indexOf('\n');
      if (i < 0 || !this.pending) return;
      this.pending.reply = JSON.parse(this.ctlBuffer.slice(0, i));
      this.ctlBuffer = this.ctlBuffer.slice(i + 1);
      this.maybeSettle();
    });
    this.ctl.on('error', () => undefined);
    this.child.on('error', () => this.onExit(127));
    this.child.on('exit', (code, signal) => this.onExit(code ?? (signal ? 128 + 9 : 1)));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Run one cell; resolves with its outcome (a timeout kills the interpreter and says so). */
  run(code: string, timeoutMs: number): Promise<CellOutcome> {
    const next = this.queue.then(() => this.runNow(code, timeoutMs));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private runNow(code: string, timeoutMs: number): Promise<CellOutcome> {
    if (this.exited)
      return Promise.resolve(
        this.died(new CappedCapture(0, Buffer.from('x')), new CappedCapture(0, Buffer.from('x')), 1),
      );
    const token = Buffer.from(`\u001e\u001fswitchboard-cell-end-${randomBytes(12).toString('hex')}\u001f\u001e`);
    return new Promise<CellOutcome>((settle) => {
      const stdout = new CappedCapture(this.maxOutputBytes, token);
      const stderr = new CappedCapture(this.maxOutputBytes, token);
      const timer = setTimeout(() => {
        const p = this.pending;
        if (!p) return;
        this.pending = undefined;
        this.kill();
        const seconds = Math.round(timeoutMs / 100) / 10;
        settle({
          ...this.outputs(p),
          exitCode: 124,
          result: null,
          error: `Execution timed out after ${seconds} s; the interpreter was stopped and its variables are gone (the next call starts a new one)`,
          restarted: true,
        });
      }, timeoutMs);
      this.pending = { stdout, stderr, settle, timer };
      this.ctl.write(`${JSON.stringify({ code, token: token.toString('utf8') })}\n`);
    });
  }

  private outputs(p: Pending) {
    return { stdout: p.stdout.text(), stderr: p.stderr.text(), truncated: p.stdout.truncated || p.stderr.truncated };
  }

  private maybeSettle(): void {
    const p = this.pending;
    if (!p?.reply || !p.stdout.done || !p.stderr.done) return;
    this.pending = undefined;
    clearTimeout(p.timer);
    p.settle({
      ...this.outputs(p),
      exitCode: p.reply.error ? 1 : 0,
      result: p.reply.result,
      error: p.reply.error,
      restarted: false,
    });
  }

  private died(stdout: CappedCapture, stderr: CappedCapture, code: number): CellOutcome {
    return {
      stdout: stdout.text(),
      stderr: stderr.text(),
      truncated: stdout.truncated || stderr.truncated,
      exitCode: code,
      result: null,
      error: `The interpreter exited (code ${code}); its variables are gone (the next call starts a new one)`,
      restarted: true,
    };
  }

  private onExit(code: number): void {
    if (this.exited) return;
    this.exited = true;
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    clearTimeout(p.timer);
    // Output written just before the exit may still be in the pipes: give them a moment to drain.
    setTimeout(() => p.settle(this.died(p.stdout, p.stderr, code)), 20);
  }

  /** Kill the interpreter and its whole process group. */
  kill(): void {
    if (this.child.pid && !this.exited) {
      try {
        process.kill(-this.child.pid, 'SIGKILL');
      } catch {
        this.child.kill('SIGKILL');
      }
    }
    this.exited = true;
  }
}
