import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { makeApp } from '../helpers/app.ts';
import { conceptVector } from './memory-fixtures/concept-embedder/index.ts';

/**
 * Semantic memory search through the real `openai` llm provider (official SDK)
 * against a local server speaking the OpenAI embeddings wire format, float
 * and base64 encodings both (the SDK asks for base64 by default).
 */
interface Seen {
  model: string;
  inputs: string[];
  auth?: string;
}

async function startEmbeddingsServer(): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const body = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      model: string;
      input: string | string[];
      encoding_format?: string;
    };
  };
  const server: Server = createServer(async (req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
      return;
    }
    const b = await body(req);
    const inputs = Array.isArray(b.input) ? b.input : [b.input];
    seen.push({ model: b.model, inputs, auth: req.headers.authorization });
    const data = inputs.map((text, index) => {
      const v = conceptVector(text);
      const embedding = b.encoding_format === 'base64' ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v;
      return { object: 'embedding', index, embedding };
    });
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        object: 'list',
        data,
        model: b.model,
        usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return { url, seen, close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))) };
}

const config = (baseUrl: string) => ({
  providers: {
    llm: {
      default: 'oai',
      instances: {
        oai: {
          type: 'openai',
          options: { base_url: baseUrl, api_key: 'sk-test-embeddings', embeddings_model: 'embed-small' },
        },
      },
    },
    memory: { default: 'smart', instances: { smart: { type: 'keyv', options: { embeddings: 'oai' } } } },
  },
});

t.test('keyv memory ranks by meaning with embeddings from the openai provider', async (t) => {
  const srv = await startEmbeddingsServer();
  t.teardown(srv.close);
  const app = await makeApp(t, config(srv.url));
  for (const d of [
    { key: 'garage', content: 'the sedan needs new brakes' },
    { key: 'pets', content: 'our tabby sleeps on the sofa' },
    { key: 'clinic', content: 'the physician sees patients on monday' },
  ]) {
    t.equal((await app.inject({ method: 'POST', url: '/api/v1/memory/kb', payload: d })).statusCode, 201);
  }
  const search = async (query: string) =>
    (await app.inject({ method: 'POST', url: '/api/v1/memory/kb/search', payload: { query, top_k: 1 } }))
      .json()
      .results.map((h: { record: { key: string } }) => h.record.key);
  t.same(await search('automobile'), ['garage']);
  t.same(await search('feline'), ['pets']);
  t.same(await search('medic'), ['clinic']);

  t.ok(srv.seen.length >= 6, 'one embeddings call per write and per search');
  t.ok(
    srv.seen.every((s) => s.model === 'embed-small'),
    'the configured embeddings model is asked for',
  );
  t.ok(
    srv.seen.every((s) => s.auth === 'Bearer sk-test-embeddings'),
    'the SDK sends the configured key',
  );
  t.ok(
    srv.seen.some((s) => s.inputs[0] === 'automobile'),
    'the query text is embedded as sent',
  );
});

t.test('an embeddings server that is down is a 503 naming the memory embedder', async (t) => {
  const srv = await startEmbeddingsServer();
  const url = srv.url;
  await srv.close();
  const app = await makeApp(t, config(url));
  const res = await app.inject({ method: 'POST', url: '/api/v1/memory/kb', payload: { key: 'k', content: 'x' } });
  t.equal(res.statusCode, 503);
  t.match(res.json(), { code: 'SB_ERR_MEMORY_EMBEDDINGS_DOWN', detail: /'oai'/ });
  t.notMatch(res.body, /sk-test-embeddings/, 'the API key is not in the answer');
});
