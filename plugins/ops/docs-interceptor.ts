/**
 * Swagger UI's requestInterceptor for /docs, run in the browser before every
 * Try-it-out call. Kept as source text and turned into a function with
 * `new Function`, so the bundler cannot rewrite it (helpers it injects would
 * not exist in the page); @fastify/swagger-ui writes a function's source into
 * the page as it is.
 *
 * - After a browser login the session cookie goes along by itself, but unsafe
 *   methods also need the CSRF token (plugins/registry/auth/csrf.ts). It is
 *   read from the `mcp_gateway_csrf` cookie, as the registry's own pages do,
 *   and sent as X-CSRF-Token unless the caller set one.
 * - Headers whose name is a pattern (`X-Cred-{Service}-{Key}`) are documented,
 *   not sendable: a browser refuses such a name, so they are dropped.
 */
const SOURCE = `
  var method = String(req.method || 'GET').toUpperCase();
  var headers = req.headers || (req.headers = {});
  for (var name in headers) if (name.indexOf('{') >= 0) delete headers[name];
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return req;
  var has = Object.keys(headers).some(function (h) { return h.toLowerCase() === 'x-csrf-token'; });
  var m = document.cookie.match(/(?:^|; )mcp_gateway_csrf=([^;]*)/);
  if (!has && m) headers['X-CSRF-Token'] = decodeURIComponent(m[1]);
  return req;
`;

export const docsRequestInterceptor = new Function('req', SOURCE) as (req: unknown) => unknown;
