import t from 'tap';
import { progressFor } from '../../bin/scan-progress.ts';

function fakeStream(isTTY: boolean) {
  let text = '';
  const stream = { isTTY, columns: 80, write: (s: string) => ((text += s), true) } as unknown as NodeJS.WriteStream;
  return { stream, out: () => text };
}

t.test('on a TTY: one redrawn bar with count, rate, ETA and the current item', async (t) => {
  const { stream, out } = fakeStream(true);
  let now = 0;
  const p = progressFor(stream, () => now);
  p.start(4);
  now = 1000;
  p.item(1, 'server /calc', 'SAFE');
  now = 2000;
  p.item(2, 'agent /helper', 'UNSAFE');
  p.end();
  const frames = out().split('\r\x1b[2K').filter(Boolean);
  t.same(frames, [
    '[######------------------] 1/4 1.0/s ETA 3s server /calc',
    '[############------------] 2/4 1.0/s ETA 2s agent /helper',
  ]);
  t.notMatch(out(), /\n/, 'no new lines: the bar redraws in place');
});

t.test('not a TTY: plain lines with the outcome, no control codes', async (t) => {
  const { stream, out } = fakeStream(false);
  let now = 0;
  const p = progressFor(stream, () => now);
  p.start(2);
  now = 500;
  p.item(1, 'skill /skills/x', 'UNSAFE (1 critical, 0 high)');
  t.equal(out(), 'scanning 2 items\n[1/2] skill /skills/x: UNSAFE (1 critical, 0 high) (2.0/s)\n');
});
