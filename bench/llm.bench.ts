import { percentiles, type BenchModule, type BenchRow } from './harness.ts';
import { startScript, startSwitchboard } from './processes.ts';
import { timeToFirstMatch } from './stream-timing.ts';

/** The OpenAI wire server of the tests, in its own process. */
const WIRE = `
import { startOpenAiWire } from '../test/wire/openai-server.ts';
await startOpenAiWire(Number(process.env.PORT));
`;

/** The first non-empty text fragment, in the wire server's (OpenAI) or the gateway's event shape. */
const TOKEN = /"(content_delta|content)"\s*:\s*"[^"]+"|"delta"\s*:\s*"[^"]+"/;
const firstToken = (url: string, body: unknown) => timeToFirstMatch(url, body, TOKEN);

/**
 * Time to the first streamed token through the gateway's openai provider vs
 * the same local wire server called directly, interleaved in one run.
 */
const run: BenchModule = async () => {
  const wire = await startScript(WIRE, '/v1/models');
  const sb = await startSwitchboard({
    providers: {
      llm: {
        default: 'openai',
        instances: {
          openai: { type: 'openai', options: { base_url: `${wire.base}/v1`, api_key: 'bench', model: 'wire-gpt' } },
        },
      },
    },
  });
  try {
    const n = Number(process.env.BENCH_SAMPLES ?? 200);
    const direct: number[] = [];
    const gateway: number[] = [];
    const messages = [{ role: 'user', content: 'hello' }];
    for (let i = 0; i < 20; i++) {
      await firstToken(`${wire.base}/v1/chat/completions`, { model: 'wire-gpt', messages, stream: true });
      await firstToken(`${sb.base}/api/v1/llm/completions/stream`, { messages });
    }
    for (let i = 0; i < n; i++) {
      direct.push(await firstToken(`${wire.base}/v1/chat/completions`, { model: 'wire-gpt', messages, stream: true }));
      gateway.push(await firstToken(`${sb.base}/api/v1/llm/completions/stream`, { messages }));
    }
    const d = percentiles(direct);
    const g = percentiles(gateway);
    const rows: BenchRow[] = [
      { group: 'llm first token', name: 'wire server directly (baseline)', p50_ms: d.p50, p99_ms: d.p99, ratio: 1 },
      {
        group: 'llm first token',
        name: 'through /api/v1/llm/completions/stream (openai provider)',
        p50_ms: g.p50,
        p99_ms: g.p99,
        ratio: g.p50 / d.p50,
        goal: '< +5 ms at p50',
        note: `adds ${(g.p50 - d.p50).toFixed(2)} ms at p50`,
      },
    ];
    return rows;
  } finally {
    await sb.stop();
    await wire.stop();
  }
};

export default run;
