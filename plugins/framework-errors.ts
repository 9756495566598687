import { STATUS_CODES, maxHeaderSize } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Errors Fastify and Node answer before any route, hook or error handler runs:
 * a path that is not valid percent-encoding, a path parameter over the router's
 * length limit, and requests the HTTP parser refuses (headers or URL too large,
 * a client that never finished its headers). Left alone they answer with
 * Fastify's `{error, message, statusCode}`; these give them `{detail, code}`.
 */

/** Fastify's router limit on one path parameter (its default, kept). */
export const MAX_PARAM_LENGTH = 100;

/** Shown paths are cut: the offending one may be 10,000 characters long. */
function shown(path: string): string {
  return path.length > 120 ? `${path.slice(0, 120)}… (${path.length} characters)` : path;
}

/** Fastify's `frameworkErrors` option: errors from the router, which runs before the request's hooks. */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const path = request.raw.url?.split('?')[0] ?? '';
  let status: number;
  let body: { detail: string; code: string };
  if (error.code === 'FST_ERR_BAD_URL') {
    status = 400;
    body = {
      detail: `The URL path '${shown(path)}' is not valid percent-encoding: every '%' must be followed by two hex digits of a UTF-8 sequence (write '%25' for a literal '%')`,
      code: 'SB_ERR_BAD_URL',
    };
  } else if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    status = 414;
    body = {
      detail: `A path parameter in '${shown(path)}' is longer than ${MAX_PARAM_LENGTH} characters; no resource has a name that long`,
      code: 'SB_ERR_PATH_PARAM_TOO_LONG',
    };
  } else {
    status = 500;
    body = { detail: 'Internal server error', code: 'SB_ERR_INTERNAL' };
    request.log.error({ err: error }, 'router error');
  }
  // The request-context hook has not run: the ids it echoes are set here.
  reply
    .header('x-request-id', request.id)
    .header('content-type', 'application/json; charset=utf-8')
    .code(status)
    .send(JSON.stringify(body));
}

const CLIENT_ERRORS: Record<string, { status: number; detail: string; code: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    detail: `The request line and headers together are larger than ${maxHeaderSize} bytes; shorten the URL (send large input in a JSON body) or the headers`,
    code: 'SB_ERR_HEADERS_TOO_LARGE',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    detail: 'The request was not received completely in time; send it again',
    code: 'SB_ERR_REQUEST_TIMEOUT',
  },
};

/**
 * Fastify's `clientErrorHandler` option (Node's 'clientError' event): there is no
 * request object yet, so the answer is written on the socket, then the socket is
 * closed, as Node and Fastify do.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const known = (err.code && CLIENT_ERRORS[err.code]) || {
    status: 400,
    detail: `The HTTP request could not be parsed (${err.code ?? 'malformed'}); check the request line and headers`,
    code: 'SB_ERR_BAD_HTTP_REQUEST',
  };
  const body = JSON.stringify({ detail: known.detail, code: known.code });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${known.status} ${STATUS_CODES[known.status]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
