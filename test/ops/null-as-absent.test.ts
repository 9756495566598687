import t from 'tap';
import { Type } from '@sinclair/typebox';
import { acceptsNull, nullStripper } from '../../plugins/ops/null-as-absent.ts';
import { makeApp } from '../helpers/app.ts';

t.test('the stripper drops nulls only where the schema does not accept them', async (t) => {
  const schema = Type.Object({
    name: Type.String(),
    note: Type.Optional(Type.String()),
    maybe: Type.Union([Type.String(), Type.Null()]),
    anything: Type.Unknown(),
    nested: Type.Optional(
      Type.Object({ a: Type.Optional(Type.Integer()), b: Type.Union([Type.Integer(), Type.Null()]) }),
    ),
    list: Type.Optional(Type.Array(Type.Object({ x: Type.Optional(Type.String()) }))),
    wrapped: Type.Optional(Type.Union([Type.Object({ y: Type.Optional(Type.Boolean()) }), Type.Null()])),
    map: Type.Optional(Type.Record(Type.String(), Type.String())),
  });
  const strip = nullStripper(schema)!;
  t.ok(strip, 'a schema with non-nullable optionals gets a step');
  const body: Record<string, unknown> = {
    name: null,
    note: null,
    maybe: null,
    anything: null,
    nested: { a: null, b: null },
    list: [{ x: null }, { x: 'kept' }],
    wrapped: { y: null },
    map: { k: null, j: 'v' },
    free: null,
  };
  strip(body);
  t.same(body, {
    maybe: null,
    anything: null,
    nested: { b: null },
    list: [{}, { x: 'kept' }],
    wrapped: {},
    map: { j: 'v' },
    free: null,
  });
  t.equal(
    nullStripper(Type.Object({ a: Type.Union([Type.String(), Type.Null()]) })),
    undefined,
    'nothing to drop: no step',
  );
  t.ok(acceptsNull(Type.Any()));
  t.notOk(acceptsNull(Type.Object({})));
  t.ok(acceptsNull(Type.Optional(Type.Union([Type.Literal('x'), Type.Null()]))));
});

t.test('explicit null means "not given" on platform request bodies', async (t) => {
  const app = await makeApp(t);
  const browser = await app.inject({
    method: 'POST',
    url: '/api/v1/browser/sessions',
    headers: { 'x-provider-browser': 'noop' },
    payload: { session_id: null, viewport: null, config: {} },
  });
  t.equal(browser.statusCode, 201, browser.body);
  t.match(browser.json(), { session_id: /^[0-9a-f-]{36}$/, viewport: null, config: {} });

  const code = await app.inject({
    method: 'POST',
    url: '/api/v1/code-interpreter/sessions',
    headers: { 'x-provider-code-interpreter': 'noop' },
    payload: { session_id: null, language: 'python', config: {} },
  });
  t.equal(code.statusCode, 201, code.body);
  t.match(code.json(), { session_id: /./, language: 'python' });

  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    payload: { name: 'nully', model: 'noop', max_tokens: null, description: null },
  });
  t.equal(created.statusCode, 201, created.body);
  t.equal(created.json().description, '', 'a null field gets its default, as if absent');
  const updated = await app.inject({
    method: 'PUT',
    url: '/api/v1/agents/nully',
    payload: {
      description: 'changed',
      model: null,
      system_prompt: null,
      primitives: null,
      hooks: null,
      max_turns: null,
      temperature: null,
      max_tokens: null,
      shared_with: null,
      provider_overrides: null,
    },
  });
  t.equal(updated.statusCode, 200, updated.body);
  t.match(updated.json(), {
    description: 'changed',
    model: 'noop',
    max_turns: 20,
    system_prompt: 'You are a helpful assistant.',
  });

  const missing = await app.inject({ method: 'POST', url: '/api/v1/agents', payload: { name: 'x', model: null } });
  t.equal(missing.statusCode, 422, 'a required field sent as null is still missing');
  t.match(JSON.stringify(missing.json().detail), /model/);
});
