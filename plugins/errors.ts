import fp from 'fastify-plugin';
import type { FastifyError, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import { isSwitchboardError } from '../core/errors.ts';
import { methodTable } from './method-not-allowed.ts';

type ValidationItem = {
  instancePath?: string;
  schemaPath?: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
};

/**
 * A union of literals (or of simple types) fails with one error per branch plus the anyOf's own ("must be
 * equal to constant" four times, then "must match a schema in anyOf"), which says nothing a caller can act on.
 * Where every branch failed on the value itself (const or type), the group becomes one item listing what is
 * allowed. Branches that failed deeper (objects) are left as they are: their errors say where.
 */
function mergeUnionErrors(items: ValidationItem[]): ValidationItem[] {
  const out: ValidationItem[] = [];
  const absorbed = new Set<ValidationItem>();
  for (const u of items) {
    if ((u.keyword !== 'anyOf' && u.keyword !== 'oneOf') || !u.schemaPath) continue;
    const branches = items.filter(
      (v) => v !== u && v.instancePath === u.instancePath && v.schemaPath?.startsWith(`${u.schemaPath}/`),
    );
    if (branches.length === 0 || !branches.every((v) => v.keyword === 'const' || v.keyword === 'type')) continue;
    const consts = branches.filter((v) => v.keyword === 'const').map((v) => JSON.stringify(v.params?.allowedValue));
    const types = [
      ...new Set(branches.filter((v) => v.keyword === 'type').map((v) => `a value of type ${String(v.params?.type)}`)),
    ];
    const choices = [...(consts.length ? [`one of ${consts.join(', ')}`] : []), ...types];
    for (const v of [u, ...branches]) absorbed.add(v);
    out.push({ instancePath: u.instancePath, keyword: 'enum', message: `must be ${choices.join(', or ')}` });
  }
  return out.length ? [...items.filter((v) => !absorbed.has(v) && !out.includes(v)), ...out] : items;
}

/** Ajv errors as FastAPI-style `{loc, msg, type}` items, so existing clients parse them. */
function validationDetail(context: string | undefined, items: ValidationItem[]) {
  return mergeUnionErrors(items).map((v) => {
    const loc: Array<string | number> = [context === 'querystring' ? 'query' : (context ?? 'body')];
    for (const part of (v.instancePath ?? '').split('/').filter(Boolean))
      loc.push(/^\d+$/.test(part) ? Number(part) : part);
    if (v.keyword === 'required' && typeof v.params?.missingProperty === 'string') loc.push(v.params.missingProperty);
    if (v.keyword === 'additionalProperties' && typeof v.params?.additionalProperty === 'string')
      loc.push(v.params.additionalProperty);
    return { loc, msg: v.message ?? 'invalid', type: v.keyword ?? 'value_error' };
  });
}

/**
 * JSON that does not parse is a 422 validation error on the registry (its spec, section 7) and a 400
 * on the platform (/api/v1), which has always answered it so (its spec's 400 is "bad request").
 */
function malformedJson(request: FastifyRequest, reply: FastifyReply, err: Error) {
  const forbidden = /forbidden prototype property/.test(err.message);
  const msg = forbidden
    ? "JSON keys named '__proto__', and 'constructor' holding 'prototype', are refused; rename them"
    : `Malformed JSON body: ${err.message}`;
  const code = forbidden ? 'SB_ERR_JSON_FORBIDDEN_KEY' : 'SB_ERR_MALFORMED_JSON';
  const url = request.url;
  if (url.startsWith('/api/v1/') || url === '/api/v1' || url.startsWith('/api/v1?'))
    return reply.status(400).send({ detail: msg, code });
  return reply
    .status(422)
    .send({ detail: [{ loc: ['body'], msg, type: forbidden ? 'json_forbidden_key' : 'json_invalid' }], code });
}

/** The media types a route takes, for the 415's detail: its schema's `consumes`, else JSON. */
function unsupportedMediaType(request: FastifyRequest): string {
  const given = String(request.headers['content-type'] ?? '(none)').slice(0, 100);
  const consumes = (request.routeOptions.schema as { consumes?: string[] } | undefined)?.consumes ?? [
    'application/json',
  ];
  const others = consumes.filter((c) => c !== 'application/json');
  if (!consumes.includes('application/json'))
    return `Unsupported Content-Type '${given}': this route accepts ${others.join(', ')}`;
  return `Unsupported Content-Type '${given}': send the body as application/json${others.length ? ` (this route also accepts ${others.join(', ')})` : ''}`;
}

/** One error shape for both surfaces: JSON `{detail, code}` for every 4xx/5xx. */
export default fp(
  async (app) => {
    app.setErrorHandler((err: FastifyError, request, reply) => {
      // Every body sent from here is {detail, code}, whatever the route's response schema says about
      // that status: a route that documents its own 503 body (/health, /readyz) would otherwise fail to
      // serialise a store error and answer 500 FST_ERR_FAILED_ERROR_SERIALIZATION.
      reply.type('application/json; charset=utf-8').serializer(JSON.stringify);
      if (isSwitchboardError(err)) {
        if (err.headers) reply.headers(err.headers);
        if (err.statusCode >= 500) request.log.warn({ code: err.code, detail: err.detail }, 'request failed');
        return reply.status(err.statusCode).send({ detail: err.detail, code: err.code });
      }
      if (err.validation) {
        return reply.status(422).send({
          detail: validationDetail(err.validationContext, err.validation as ValidationItem[]),
          code: 'SB_ERR_VALIDATION',
        });
      }
      switch (err.code) {
        case 'FST_ERR_CTP_INVALID_JSON_BODY':
        case 'FST_ERR_CTP_EMPTY_JSON_BODY':
          return malformedJson(request, reply, err);
        case 'FST_ERR_CTP_BODY_TOO_LARGE':
          return reply.status(413).send({
            detail: `The request body is larger than the limit of ${request.routeOptions.bodyLimit ?? app.initialConfig.bodyLimit} bytes (config body_limit_bytes); send less`,
            code: 'SB_ERR_BODY_TOO_LARGE',
          });
        case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
          return reply
            .status(415)
            .send({ detail: unsupportedMediaType(request), code: 'SB_ERR_UNSUPPORTED_MEDIA_TYPE' });
      }
      // Syntax errors from the JSON parser carry statusCode 400 without a Fastify code.
      if (err instanceof SyntaxError && (err as FastifyError).statusCode === 400)
        return malformedJson(request, reply, err);
      const status = err.statusCode && err.statusCode >= 400 ? err.statusCode : 500;
      if (status >= 500) {
        request.log.error({ err }, 'unhandled error');
        return reply.status(status).send({ detail: 'Internal server error', code: 'SB_ERR_INTERNAL' });
      }
      return reply
        .status(status)
        .send({ detail: err.message, code: err.code ? `SB_ERR_HTTP_${err.code}` : 'SB_ERR_BAD_REQUEST' });
    });

    // Metrics count unmatched requests here (registered before this plugin, ops/metrics.ts): the
    // not-found handler is not a route, so no route's hook sees it.
    // A path that some route serves under another method is a 405 with Allow, not a 404.
    const count = app.countUnmatched;
    const allowedFor = methodTable(app);
    const preHandler: preHandlerHookHandler = (request, reply, done) => {
      const allowed = allowedFor(request.url.split('?')[0]);
      if (allowed.length) reply.code(405).header('allow', allowed.join(', '));
      else reply.code(404);
      count?.(request, reply);
      done();
    };
    app.setNotFoundHandler({ preHandler }, (request, reply) => {
      const path = request.url.split('?')[0];
      if (reply.statusCode === 405) {
        return reply.send({
          detail: `${request.method} is not allowed on ${path}; use ${String(reply.getHeader('allow'))}`,
          code: 'SB_ERR_METHOD_NOT_ALLOWED',
        });
      }
      reply.status(404).send({ detail: `No route for ${request.method} ${path}`, code: 'SB_ERR_ROUTE_NOT_FOUND' });
    });
  },
  { name: 'switchboard-errors' },
);
