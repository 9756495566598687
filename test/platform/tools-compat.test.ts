import t from 'tap';
import { makeApp } from '../helpers/app.ts';

// The noop tools provider keeps its catalogue in memory, whatever the configured default is.
const headers = { 'x-provider-tools': 'noop' };

t.test('search answers in the reference shape too; register accepts `parameters`', async (t) => {
  const app = await makeApp(t);
  const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
  // The reference client's register body: name, description, parameters, metadata.
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/tools',
    headers,
    payload: { name: 'get_weather', description: 'Current weather for a city', parameters: schema, metadata: {} },
  });
  t.equal(created.statusCode, 201, created.body);
  t.same(created.json().input_schema, schema, 'parameters is taken as the input_schema');
  await app.inject({
    method: 'POST',
    url: '/api/v1/tools',
    headers,
    payload: { name: 'stock_quote', description: 'Stock prices' },
  });

  const search = await app.inject({ method: 'GET', url: '/api/v1/tools/search?query=weather&max_results=10', headers });
  t.equal(search.statusCode, 200);
  const body = search.json();
  t.match(body.matches, [{ tool: { name: 'get_weather' }, score: Number }], 'the spec answer is kept');
  t.equal(body.tools.length, 1, 'the reference client reads `tools`');
  t.match(body.tools[0], {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: schema,
    input_schema: schema,
    score: Number,
  });

  const none = await app.inject({ method: 'GET', url: '/api/v1/tools/search?query=zzz', headers });
  t.same(none.json().tools, [], 'no match: an empty list, not a missing key');
});
