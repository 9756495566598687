import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import { isSwitchboardError } from '../../../core/errors.ts';
import { type CompletionRequest, CompletionResponse, type LlmProvider } from '../../../core/primitives/llm.ts';
import { requireCapability } from '../capability.ts';
import { CompletionRequestBody, referenceToolShapes, toolChoiceObject } from './reference-shapes.ts';

const tags = ['llm'];

/** /api/v1/llm: completions, streamed completions (spec 6 events), models. */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const llm = (headers: Record<string, string | string[] | undefined>) =>
    app.sb.providers.resolve<LlmProvider>('llm', headers);
  const toolsGuard = (p: LlmProvider, body: CompletionRequest) => {
    if (body.tools && body.tools.length > 0) requireCapability(p, 'tools', 'tool calling');
  };
  /** The validated body as providers take it: tool_choice in its object form; the reference's `model: ""` means the default model. */
  const providerRequest = (body: Static<typeof CompletionRequestBody>): CompletionRequest => {
    const { tool_choice, model, ...rest } = body;
    return {
      ...rest,
      ...(model ? { model } : {}),
      ...(tool_choice === undefined ? {} : { tool_choice: toolChoiceObject(tool_choice) }),
    };
  };

  app.post(
    '/completions',
    {
      schema: { tags, summary: 'A completion', body: CompletionRequestBody, response: { 200: CompletionResponse } },
      preValidation: referenceToolShapes,
    },
    async (request) => {
      const p = llm(request.headers);
      const body = providerRequest(request.body);
      toolsGuard(p, body);
      const abort = new AbortController();
      request.raw.once('close', () => {
        if (!request.raw.complete) abort.abort();
      });
      return p.complete(body, { signal: abort.signal });
    },
  );

  app.post(
    '/completions/stream',
    {
      schema: {
        tags,
        summary:
          'A streamed completion: text/event-stream of content_delta, tool_use_start, tool_use_delta, tool_use_complete, message_stop, metadata',
        body: CompletionRequestBody,
        response: {
          200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: Type.String() } } },
        },
      },
      preValidation: referenceToolShapes,
    },
    async (request, reply) => {
      const p = llm(request.headers);
      const body = providerRequest(request.body);
      requireCapability(p, 'streaming', 'streaming');
      toolsGuard(p, body);
      const abort = new AbortController();
      const it = p.stream(body, { signal: abort.signal })[Symbol.asyncIterator]();
      // The first event is awaited before any byte is sent, so an upstream failure
      // at the start is an ordinary JSON error with its status.
      let next = await it.next();
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-request-id': request.id,
      });
      res.on('close', () => abort.abort());
      try {
        while (!next.done) {
          if (res.destroyed) break;
          res.write(`data: ${JSON.stringify(next.value)}\n\n`);
          next = await it.next();
        }
      } catch (err) {
        if (!res.destroyed) {
          // After the headers only an in-band event can report a failure (the one type beyond spec 6).
          const detail = isSwitchboardError(err) ? err.detail : `The LLM provider '${p.name}' failed mid-stream`;
          const code = isSwitchboardError(err) ? err.code : 'SB_ERR_LLM_STREAM_FAILED';
          res.write(`data: ${JSON.stringify({ type: 'error', detail, code })}\n\n`);
        }
        if (!isSwitchboardError(err)) request.log.warn({ err }, 'llm stream failed');
      } finally {
        await it.return?.();
        res.end();
      }
    },
  );

  app.get(
    '/models',
    {
      schema: {
        tags,
        summary: 'Model ids of the provider',
        response: { 200: Type.Object({ provider: Type.String(), models: Type.Array(Type.String()) }) },
      },
    },
    async (request) => {
      const p = llm(request.headers);
      requireCapability(p, 'models', 'listing models');
      return { provider: p.name, models: await p.models() };
    },
  );
};

export default routes;
