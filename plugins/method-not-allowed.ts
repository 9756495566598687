import type { FastifyInstance } from 'fastify';

/**
 * Which methods the router would take for a path that did not match the request's
 * method: the answer for a 405 and its `Allow` header. Read from Fastify's own
 * route table (every method any route was registered with, then a lookup per
 * method), so a new route needs nothing here.
 */
export function methodTable(app: FastifyInstance): (path: string) => string[] {
  const methods = new Set<string>();
  app.addHook('onRoute', (route) => {
    for (const m of Array.isArray(route.method) ? route.method : [route.method]) methods.add(m.toUpperCase());
  });
  return (path) => {
    const allowed: string[] = [];
    for (const method of methods) {
      if (app.findRoute({ method: method as 'GET', url: path })) allowed.push(method);
    }
    return allowed.sort();
  };
}
