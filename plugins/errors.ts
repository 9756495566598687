import fp from 'fastify-plugin';
import type { FastifyError, preHandlerHookHandler } from 'fastify';
import { isSwitchboardError } from '../core/errors.ts';

type ValidationItem = { instancePath?: string; message?: string; keyword?: string; params?: Record<string, unknown> };

/** Ajv errors as FastAPI-style `{loc, msg, type}` items, so existing clients parse them. */
function validationDetail(context: string | undefined, items: ValidationItem[]) {
  return items.map((v) => {
    const loc: Array<string | number> = [context === 'querystring' ? 'query' : (context ?? 'body')];
    for (const part of (v.instancePath ?? '').split('/').filter(Boolean)) loc.push(/^\d+$/.test(part) ? Number(part) : part);
    if (v.keyword === 'required' && typeof v.params?.missingProperty === 'string') loc.push(v.params.missingProperty);
    if (v.keyword === 'additionalProperties' && typeof v.params?.additionalProperty === 'string') loc.push(v.params.additionalProperty);
    return { loc, msg: v.message ?? 'invalid', type: v.keyword ?? 'value_error' };
  });
}

/** One error shape for both surfaces: JSON `{detail, code}` for every 4xx/5xx. */
export default fp(
  async (app) => {
    app.setErrorHandler((err: FastifyError, request, reply) => {
      if (isSwitchboardError(err)) {
        if (err.headers) reply.headers(err.headers);
        if (err.statusCode >= 500) request.log.warn({ code: err.code, detail: err.detail }, 'request failed');
        return reply.status(err.statusCode).send({ detail: err.detail, code: err.code });
      }
      if (err.validation) {
        return reply.status(422).send({ detail: validationDetail(err.validationContext, err.validation as ValidationItem[]), code: 'SB_ERR_VALIDATION' });
      }
      switch (err.code) {
        case 'FST_ERR_CTP_INVALID_JSON_BODY':
        case 'FST_ERR_CTP_EMPTY_JSON_BODY':
          return reply.status(400).send({ detail: `Malformed JSON body: ${err.message}`, code: 'SB_ERR_MALFORMED_JSON' });
        case 'FST_ERR_CTP_BODY_TOO_LARGE':
          return reply.status(413).send({ detail: 'Request body is larger than the configured limit', code: 'SB_ERR_BODY_TOO_LARGE' });
        case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
          return reply.status(415).send({ detail: `Unsupported Content-Type: ${request.headers['content-type'] ?? '(none)'}`, code: 'SB_ERR_UNSUPPORTED_MEDIA_TYPE' });
      }
      // Syntax errors from the JSON parser carry statusCode 400 without a Fastify code.
      if (err instanceof SyntaxError && (err as FastifyError).statusCode === 400) {
        return reply.status(400).send({ detail: `Malformed JSON body: ${err.message}`, code: 'SB_ERR_MALFORMED_JSON' });
      }
      const status = err.statusCode && err.statusCode >= 400 ? err.statusCode : 500;
      if (status >= 500) {
        request.log.error({ err }, 'unhandled error');
        return reply.status(status).send({ detail: 'Internal server error', code: 'SB_ERR_INTERNAL' });
      }
      return reply.status(status).send({ detail: err.message, code: err.code ? `SB_ERR_HTTP_${err.code}` : 'SB_ERR_BAD_REQUEST' });
    });

    // Metrics count unmatched requests here (registered before this plugin, ops/metrics.ts): the
    // not-found handler is not a route, so no route's hook sees it.
    const count = app.countUnmatched;
    const preHandler: preHandlerHookHandler = (request, reply, done) => {
      count?.(request, reply.code(404));
      done();
    };
    app.setNotFoundHandler({ preHandler }, (request, reply) => {
      reply.status(404).send({ detail: `No route for ${request.method} ${request.url.split('?')[0]}`, code: 'SB_ERR_ROUTE_NOT_FOUND' });
    });
  },
  { name: 'switchboard-errors' },
);
