import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';
import { memoizeFrozen } from './serialize-memo.ts';
import { nullStripper } from './null-as-absent.ts';

/**
 * Route validators and response serialisers compiled on a route's first use
 * instead of at startup. Compiling the ~190 routes' schemas with Ajv and
 * fast-json-stringify was ~1.7 s of CPU and a good share of the idle memory of
 * a start, while a running instance typically serves a handful of routes. The
 * schemas stay on the routes untouched, so /openapi.json and /docs are as
 * complete as before; an invalid schema now fails on its route's first request
 * (a 500) instead of at startup, which test/ops/lazy-compilers.test.ts guards
 * by compiling every route's schemas once.
 *
 * Fastify's own compilers (@fastify/ajv-compiler, @fastify/fast-json-stringify-compiler)
 * do the work; they are loaded on first need, not at import.
 */

type RouteSchema = { schema: unknown; method: string; url: string; httpPart?: string; [k: string]: unknown };
type Validator = ((data: unknown, ctx?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };
type Serializer = (data: unknown) => string;
type ValidatorBuilder = (externalSchemas: unknown, options: unknown) => (route: RouteSchema) => Validator;
type SerializerBuilder = (externalSchemas: unknown, options: unknown) => (route: RouteSchema) => Serializer;

const require = createRequire(import.meta.url);

/**
 * Header names are case-insensitive and Node lower-cases them. Fastify
 * lower-cases a header schema's property names itself only for its default
 * compiler, and any compilersFactory counts as custom, so it is done here.
 */
function lowerCaseHeaderSchema(schema: unknown): unknown {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const s = schema as Record<string, unknown>;
  const out: Record<string, unknown> = { ...s };
  if (s.properties && typeof s.properties === 'object') {
    out.properties = Object.fromEntries(
      Object.entries(s.properties as Record<string, unknown>).map(([k, v]) => [k.toLowerCase(), v]),
    );
  }
  if (Array.isArray(s.required)) out.required = s.required.map((r) => (typeof r === 'string' ? r.toLowerCase() : r));
  return out;
}

/**
 * A body validator that first drops null-valued properties the schema does not
 * declare nullable (plugins/ops/null-as-absent.ts): done here, once, so every
 * route treats an explicit null as "not given" without widening its schema.
 */
/**
 * Platform (/api/v1) bodies are JSON only, so a value of the wrong type is the caller's mistake to hear about:
 * `content: 42` must be a 422, not the string "42". Type coercion stays for querystrings, params and headers
 * (always text) and for registry bodies, whose routes also take HTML forms, where every field arrives as text.
 */
function strictBody(route: RouteSchema): boolean {
  return route.httpPart === 'body' && route.url.startsWith('/api/v1/');
}

function withoutCoercion(options: unknown): unknown {
  const o = (options ?? {}) as { customOptions?: Record<string, unknown> };
  return { ...o, customOptions: { ...o.customOptions, coerceTypes: false } };
}

function withNullAsAbsent(route: RouteSchema, real: Validator): Validator {
  if (route.httpPart !== 'body') return real;
  const strip = nullStripper(route.schema);
  if (!strip) return real;
  const v = ((data: unknown, ctx?: unknown) => {
    strip(data);
    return ctx === undefined ? real(data) : real(data, ctx);
  }) as Validator;
  Object.defineProperty(v, 'schemaEnv', { get: () => real.schemaEnv });
  Object.defineProperty(v, 'errors', { get: () => real.errors, set: (e) => (real.errors = e) });
  return v;
}

/**
 * Ajv's type coercion turns the text '1e309' or 'Infinity' into Infinity and then lets it pass `integer`
 * and even `maximum`; the route then answers 500 when its response serialiser meets it (found by
 * test/fuzz/routes.test.ts on ?limit=1e309). Text parts (querystring, params, headers) are checked for a
 * number that is not finite after Ajv is done, one level deep, as they are flat.
 */
function withFiniteNumbers(route: RouteSchema, real: Validator): Validator {
  if (route.httpPart === 'body') return real;
  const v = ((data: unknown, ctx?: unknown) => {
    const ok = ctx === undefined ? real(data) : real(data, ctx);
    if (ok !== true || data === null || typeof data !== 'object') return ok;
    for (const [key, value] of Object.entries(data)) {
      const values: unknown[] = Array.isArray(value) ? value : [value];
      if (values.some((x) => typeof x === 'number' && !Number.isFinite(x))) {
        real.errors = [
          { instancePath: `/${key}`, keyword: 'type', message: 'must be a finite number', params: {} },
        ] as never;
        return false;
      }
    }
    return ok;
  }) as Validator;
  Object.defineProperty(v, 'schemaEnv', { get: () => real.schemaEnv });
  Object.defineProperty(v, 'errors', { get: () => real.errors, set: (e) => (real.errors = e) });
  return v;
}

export interface LazyCompilers {
  compilersFactory: NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
  /** Compile every route schema not compiled yet; returns how many. Throws the first compile error. */
  compileAll(): number;
}

/** One per Fastify instance, like Fastify's own compilers (one Ajv per app, not shared between the apps of a test run). */
export function lazyCompilers(): LazyCompilers {
  let ajvFactory: ValidatorBuilder | undefined;
  let fjsFactory: SerializerBuilder | undefined;
  const realValidatorBuilder = (): ValidatorBuilder =>
    (ajvFactory ??= (require('@fastify/ajv-compiler') as () => ValidatorBuilder)());
  const realSerializerBuilder = (): SerializerBuilder =>
    (fjsFactory ??= (require('@fastify/fast-json-stringify-compiler') as () => SerializerBuilder)());
  const pending = new Set<() => unknown>();

  /** A stand-in that compiles on first use, then calls straight through. */
  function once<F>(compile: () => F): () => F {
    let real: F | undefined;
    const force = () => {
      if (real === undefined) {
        real = compile();
        pending.delete(force);
      }
      return real;
    };
    pending.add(force);
    return force;
  }

  function lazyValidator(compile: () => Validator): Validator {
    const force = once(compile);
    const v = ((data: unknown, ctx?: unknown) => (ctx === undefined ? force()(data) : force()(data, ctx))) as Validator;
    // Fastify reads `schemaEnv` before each call (to pass Ajv the parent object
    // for root coercion) and `errors` after it: both come from the real validator.
    Object.defineProperty(v, 'schemaEnv', { get: () => force().schemaEnv });
    Object.defineProperty(v, 'errors', { get: () => force().errors, set: (e) => (force().errors = e) });
    return v;
  }

  function lazySerializer(compile: () => Serializer): Serializer {
    const force = once(compile);
    return memoizeFrozen((data: unknown) => force()(data));
  }

  return {
    compilersFactory: {
      buildValidator: ((externalSchemas: unknown, options: unknown) => {
        let compiler: ((route: RouteSchema) => Validator) | undefined;
        let strictCompiler: ((route: RouteSchema) => Validator) | undefined;
        return (route: RouteSchema) => {
          const r = route.httpPart === 'headers' ? { ...route, schema: lowerCaseHeaderSchema(route.schema) } : route;
          const pick = () =>
            strictBody(r)
              ? (strictCompiler ??= realValidatorBuilder()(externalSchemas, withoutCoercion(options)))
              : (compiler ??= realValidatorBuilder()(externalSchemas, options));
          return lazyValidator(() => withFiniteNumbers(r, withNullAsAbsent(r, pick()(r))));
        };
      }) as never,
      buildSerializer: ((externalSchemas: unknown, options: unknown) => {
        let compiler: ((route: RouteSchema) => Serializer) | undefined;
        return (route: RouteSchema) =>
          lazySerializer(() => (compiler ??= realSerializerBuilder()(externalSchemas, options))(route));
      }) as never,
    },
    compileAll() {
      const all = [...pending];
      for (const force of all) force();
      return all.length;
    },
  };
}

const byApp = new WeakMap<object, () => number>();

/** Remember which app a set of lazy compilers belongs to (plugins/app.ts). */
export function trackLazyCompilers(app: object, lazy: LazyCompilers): void {
  byApp.set(app, lazy.compileAll);
}

/** Compile every route schema of `app` that has not been used yet (after `app.ready()`); returns how many. */
export function compileAllSchemas(app: object): number {
  const compileAll = byApp.get(app);
  if (!compileAll) throw new Error('this app was not built with lazy compilers (plugins/app.ts buildApp)');
  return compileAll();
}
