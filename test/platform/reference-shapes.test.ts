import t from 'tap';
import { makeApp } from '../helpers/app.ts';

/**
 * Request shapes of the reference platform client (agentic-primitives-gateway's
 * Python client and pydantic models) that the spec leaves open: accepted here,
 * one subtest per item of issue 14. The wire-level run of the same shapes from
 * Python is test/compat/reference-clients.test.ts.
 */

t.test('policy: POST /policy/engines accepts config and keeps it', async (t) => {
  const app = await makeApp(t);
  const headers = { 'x-provider-policy': 'noop' };
  const created = await app.inject({ method: 'POST', url: '/api/v1/policy/engines', headers, payload: { name: 'main', description: '', config: { mode: 'strict', max: 3 } } });
  t.equal(created.statusCode, 201, created.body);
  t.match(created.json(), { engine_id: /./, name: 'main', config: { mode: 'strict', max: 3 } });
  const got = await app.inject({ method: 'GET', url: `/api/v1/policy/engines/${created.json().engine_id}`, headers });
  t.same(got.json().config, { mode: 'strict', max: 3 });
  const bad = await app.inject({ method: 'POST', url: '/api/v1/policy/engines', headers, payload: { name: 'x', config: 'strict' } });
  t.equal(bad.statusCode, 422, 'config must be an object');
});
