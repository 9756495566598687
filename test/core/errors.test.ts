import t from 'tap';
import { makeApp } from '../helpers/app.ts';

t.test('every error is JSON {detail, code}', async (t) => {
  const app = await makeApp(t);
  const notFound = await app.inject({ method: 'GET', url: '/no/such/route' });
  t.equal(notFound.statusCode, 404);
  t.match(notFound.json(), { detail: /No route for GET \/no\/such\/route/, code: 'SB_ERR_ROUTE_NOT_FOUND' });
});

t.test('request ids are echoed, or made when absent', async (t) => {
  const app = await makeApp(t);
  const given = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'abc-123' } });
  t.equal(given.headers['x-request-id'], 'abc-123');
  const made = await app.inject({ method: 'GET', url: '/healthz' });
  t.match(made.headers['x-request-id'], /^[0-9a-f-]{36}$/);
  t.equal(made.headers['x-correlation-id'], made.headers['x-request-id']);
});
