import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import ts from 'typescript';

/**
 * Route handlers read `request.params/query/body` typed from their TypeBox
 * schemas (Fastify's TypeBox type provider), never through a cast or a
 * hand-written route generic that can drift from the schema (issue 15).
 * Parsed with the TypeScript compiler (syntax only, no type check), so
 * formatting and line breaks do not hide a cast.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DIRS = ['plugins', 'providers'];

/**
 * Casts that stay, each for a reason. Matched by file and the cast's text, so an entry that no
 * longer matches anything fails the test too (the list stays honest).
 */
const ALLOWED: Array<{ file: string; cast: string; why: string }> = [
  {
    file: 'plugins/registry/auth/csrf.ts',
    cast: 'request.body as Record<string, unknown> | undefined',
    why: 'runs before validation on every unsafe route, whatever its body schema (form field csrf_token)',
  },
  {
    file: 'plugins/platform/policy-mapping.ts',
    cast: 'request.body as { params?: unknown } | undefined',
    why: 'a preHandler hook for every /api/v1 route: no one schema types it',
  },
  {
    file: 'plugins/platform/policy-mapping.ts',
    cast: 'request.params as Record<string, string> | undefined',
    why: 'a preHandler hook for every /api/v1 route: no one schema types it',
  },
  {
    file: 'plugins/platform/tools/index.ts',
    cast: 'request.body as Record<string, unknown> | null',
    why: 'preValidation hook: the body has not been validated yet',
  },
  {
    file: 'plugins/platform/llm/reference-shapes.ts',
    cast: 'request.body as { tools?: unknown } | null',
    why: 'preValidation hook: the body has not been validated yet',
  },
  {
    file: 'plugins/platform/identity/index.ts',
    cast: 'request.body as Static<B>',
    why: 'one generic handler serves three routes; Ajv validated the body against d.body, and Draw<B, R> ties B to it',
  },
  {
    file: 'plugins/console/index.ts',
    cast: 'request.query as { query?: string } | undefined',
    why: "onRequest hook on other plugins' routes, before validation",
  },
  {
    file: 'plugins/console/index.ts',
    cast: 'request.params as { server: string }',
    why: "onRequest hook on other plugins' routes, before validation",
  },
];

/** Route files that register routes without the type provider, each for a reason (none today). */
const UNTYPED_ROUTE_FILES: Array<{ file: string; why: string }> = [];

const ROUTE_METHODS = new Set(['get', 'post', 'put', 'patch', 'delete', 'head', 'options', 'all']);
const REQUEST_PARTS = new Set(['params', 'query', 'body']);
const GENERIC_PARTS = new Set(['Body', 'Querystring', 'Params', 'Headers']);

interface Finding {
  kind: 'cast' | 'route-generic' | 'untyped-routes';
  line: number;
  text: string;
}

/** `request.params as X`, `(req.body as X)`, `request.query as unknown as X`, and the `<X>request.body` form. */
function requestPartCast(node: ts.Node): boolean {
  if (!ts.isAsExpression(node) && !ts.isTypeAssertionExpression(node)) return false;
  let inner: ts.Expression = node.expression;
  while (ts.isParenthesizedExpression(inner) || ts.isAsExpression(inner)) inner = inner.expression;
  return (
    ts.isPropertyAccessExpression(inner) &&
    REQUEST_PARTS.has(inner.name.text) &&
    ts.isIdentifier(inner.expression) &&
    /^(request|req)$/.test(inner.expression.text)
  );
}

/** A type literal naming request parts with inline shapes: `{ Body: { name: string } }`. */
function handWrittenParts(type: ts.TypeNode | undefined): boolean {
  return (
    !!type &&
    ts.isTypeLiteralNode(type) &&
    type.members.some(
      (m) =>
        ts.isPropertySignature(m) &&
        ts.isIdentifier(m.name) &&
        GENERIC_PARTS.has(m.name.text) &&
        !!m.type &&
        ts.isTypeLiteralNode(m.type),
    )
  );
}

/** `app.post<{ Body: {...} }>(...)` or `FastifyRequest<{ Params: {...} }>`: types written by hand beside a schema. */
function routeGeneric(node: ts.Node): boolean {
  if (
    ts.isCallExpression(node) &&
    ts.isPropertyAccessExpression(node.expression) &&
    (ROUTE_METHODS.has(node.expression.name.text) || node.expression.name.text === 'route')
  )
    return (node.typeArguments ?? []).some(handWrittenParts);
  if (ts.isTypeReferenceNode(node) && ts.isIdentifier(node.typeName) && node.typeName.text === 'FastifyRequest')
    return (node.typeArguments ?? []).some(handWrittenParts);
  return false;
}

/** `x.get('/path', {...}, handler)` or `x.route({ url, handler })`: a Fastify route registration. */
function registersRoute(node: ts.Node): boolean {
  if (!ts.isCallExpression(node) || !ts.isPropertyAccessExpression(node.expression)) return false;
  const method = node.expression.name.text;
  const [first] = node.arguments;
  if (method === 'route')
    return (
      !!first &&
      ts.isObjectLiteralExpression(first) &&
      first.properties.some((p) => p.name && ts.isIdentifier(p.name) && p.name.text === 'handler')
    );
  if (!ROUTE_METHODS.has(method) || !first || !/^['"`](\/|\$\{)/.test(first.getText())) return false;
  const fn = (a: ts.Expression) => ts.isArrowFunction(a) || ts.isFunctionExpression(a);
  const [, second, third] = node.arguments;
  if (node.arguments.length === 2) return fn(second);
  if (node.arguments.length !== 3) return false;
  const options = ts.isObjectLiteralExpression(second) || ts.isIdentifier(second) || ts.isCallExpression(second);
  return options && (fn(third) || ts.isIdentifier(third) || ts.isCallExpression(third));
}

function findings(source: string, fileName = 'x.ts'): Finding[] {
  const sf = ts.createSourceFile(fileName, source, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const out: Finding[] = [];
  let firstRoute: ts.Node | undefined;
  const at = (n: ts.Node, kind: Finding['kind']) =>
    out.push({ kind, line: sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1, text: n.getText(sf) });
  const visit = (n: ts.Node) => {
    // The outermost cast only: `request.body as unknown as X` is one finding.
    if (requestPartCast(n)) return at(n, 'cast');
    if (routeGeneric(n)) at(n, 'route-generic');
    if (!firstRoute && registersRoute(n)) firstRoute = n;
    ts.forEachChild(n, visit);
  };
  visit(sf);
  const typed = /withTypeProvider<TypeBoxTypeProvider>\(\)|FastifyPluginAsyncTypebox/.test(source);
  if (firstRoute && !typed) at(firstRoute, 'untyped-routes');
  return out;
}

function tsFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name === 'node_modules') continue;
    if (statSync(p).isDirectory()) tsFiles(p, out);
    else if (p.endsWith('.ts') && !p.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

t.test('the scanner finds what it is for (so a clean tree means something)', async (t) => {
  const kinds = (src: string) => findings(src).map((f) => f.kind);
  t.same(kinds('const { a } = request.params as { a: string };'), ['cast']);
  t.same(kinds('f((req.body as unknown as X).y);'), ['cast']);
  t.same(kinds('const q = (request.query as {\n  k: number;\n});'), ['cast']);
  t.same(kinds('const b = <X>request.body;'), ['cast']);
  t.same(kinds("app.post<{ Body: { name: string } }>('/x', {}, async () => 1);"), ['route-generic', 'untyped-routes']);
  t.same(kinds('const h = async (request: FastifyRequest<{ Params: { id: string } }>) => 1;'), ['route-generic']);
  t.same(kinds("fastify.get('/x', { schema: {} }, async (request) => request.params);"), ['untyped-routes']);
  t.same(kinds("app.route({ method: 'GET', url: '/x', handler: async () => 1 });"), ['untyped-routes']);
  // What is fine: typed instances, types derived from schemas, non-request casts, map lookups.
  t.same(
    kinds(
      "const app = fastify.withTypeProvider<TypeBoxTypeProvider>();\napp.get('/x', { schema: {} }, async (request) => request.params.id);",
    ),
    [],
  );
  t.same(kinds('const h = async (request: FastifyRequest<{ Params: Static<typeof P> }>) => 1;'), []);
  t.same(kinds("const v = request.headers['x'] as string; const w = other.body as X;"), []);
  t.same(kinds("const s = servers.get(`/${id}`); cache.delete('/k', 1, fn);"), []);
});

t.test('route handlers under plugins/ and providers/ read request parts typed, not cast', async (t) => {
  const files = DIRS.flatMap((d) => tsFiles(join(ROOT, d)));
  t.ok(files.length > 100, `read ${files.length} files`);
  const used = new Set<number>();
  const problems: string[] = [];
  for (const path of files) {
    const file = relative(ROOT, path).split('\\').join('/');
    for (const f of findings(readFileSync(path, 'utf8'), file)) {
      const where = `${file}:${f.line}`;
      if (f.kind === 'cast') {
        const i = ALLOWED.findIndex((a) => a.file === file && f.text.replace(/\s+/g, ' ').includes(a.cast));
        if (i >= 0) used.add(i);
        else
          problems.push(
            `${where}: \`${f.text}\` casts a request part; register the route on a TypeBox-typed instance (fastify.withTypeProvider<TypeBoxTypeProvider>() or FastifyPluginAsyncTypebox) and read it typed, or add it to ALLOWED with the reason`,
          );
      } else if (f.kind === 'route-generic') {
        problems.push(
          `${where}: \`${f.text.split('\n')[0]}\` writes request types by hand; let the type provider derive them from the schema (or use Static<typeof Schema>)`,
        );
      } else if (!UNTYPED_ROUTE_FILES.some((u) => u.file === file)) {
        problems.push(
          `${where}: registers routes without the TypeBox type provider (fastify.withTypeProvider<TypeBoxTypeProvider>() or FastifyPluginAsyncTypebox)`,
        );
      }
    }
  }
  t.same(problems, [], 'no request casts, hand-written route generics or untyped route files');
  const stale = ALLOWED.filter((_, i) => !used.has(i)).map((a) => `${a.file}: ${a.cast}`);
  t.same(stale, [], 'every ALLOWED entry still matches a cast (remove the ones that do not)');
});
