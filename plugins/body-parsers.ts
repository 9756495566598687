import { parse as parseForm } from 'node:querystring';
import fp from 'fastify-plugin';
import { type SwitchboardError, unprocessable } from '../core/errors.ts';
import { jsonPathAt, scanJsonLimits, type JsonLimits, type JsonLimitViolation } from './json-limits.ts';

/** The config keys named in the 422s, so the caller (or operator) knows which limit it met. */
const LIMIT_KEYS = { depth: 'json_limits.max_depth', keys: 'json_limits.max_object_keys' } as const;

function limitError(
  text: string,
  v: JsonLimitViolation,
  limits: JsonLimits,
  prefix: Array<string | number>,
): SwitchboardError {
  const path = jsonPathAt(text, v.offset);
  // For the member count the last entry is the member being read; the object is the one before it.
  const loc = ['body', ...prefix, ...(v.limit === 'keys' ? path.slice(0, -1) : path)];
  const msg =
    v.limit === 'depth'
      ? `JSON is nested deeper than ${limits.maxDepth} levels here (limit ${LIMIT_KEYS.depth}); flatten the value`
      : `This JSON object has more than ${limits.maxObjectKeys} members (limit ${LIMIT_KEYS.keys}); send fewer keys`;
  return unprocessable(v.limit === 'depth' ? 'SB_ERR_JSON_TOO_DEEP' : 'SB_ERR_JSON_OBJECT_TOO_LARGE', [
    { loc, msg, type: v.limit === 'depth' ? 'json_depth' : 'json_object_size' },
  ]);
}

/**
 * A number JSON.parse reads as Infinity has an exponent of three digits or hundreds of digits; only a
 * body whose text holds one of those (strings included, so some are false alarms) is walked.
 */
const MAYBE_OVERFLOW = /[eE]\+?\d{3}|\d{300}/;

/** The path to the first value or key of a parsed body that `bad` flags (depth is bounded by now), or undefined. */
function pathWhere(value: unknown, bad: (v: unknown) => boolean): Array<string | number> | undefined {
  const stack: Array<[unknown, Array<string | number>]> = [[value, []]];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (bad(v)) return path;
    if (v && typeof v === 'object')
      for (const [k, c] of Object.entries(v)) {
        const at = [...path, Array.isArray(v) ? Number(k) : k];
        if (!Array.isArray(v) && bad(k)) return at;
        stack.push([c, at]);
      }
  }
  return undefined;
}

const infinite = (v: unknown) => typeof v === 'number' && !Number.isFinite(v);

/**
 * JSON may escape half of a UTF-16 surrogate pair alone (`"\ud800"`). That is not Unicode text: stored, it comes
 * back changed (SQLite writes U+FFFD), and key encoders throw on it (a 500 the route fuzzer found). Only a body
 * whose text holds a surrogate escape is walked; the refusal names where.
 */
const MAYBE_SURROGATE = /\\u[dD][89a-fA-F]/;
const UNPAIRED = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const unpaired = (v: unknown) => typeof v === 'string' && UNPAIRED.test(v);

/** What a parsed JSON body must not hold: a text test that finds candidates, and the value test that decides. */
const VALUE_CHECKS = [
  {
    maybe: MAYBE_SURROGATE,
    bad: unpaired,
    code: 'SB_ERR_JSON_UNPAIRED_SURROGATE',
    type: 'json_string',
    msg: 'This text holds half of a UTF-16 surrogate pair (a \\uD800-\\uDFFF escape alone), which is not valid Unicode; send well-formed text',
  },
  {
    maybe: MAYBE_OVERFLOW,
    bad: infinite,
    code: 'SB_ERR_JSON_NUMBER_OUT_OF_RANGE',
    type: 'json_number',
    msg: 'This number is too large for a double (it parses as Infinity)',
  },
] as const;

/**
 * Fastify's parser says only "Body is not valid JSON"; the caller needs to know where, or that the
 * JSON was fine but held a prototype key. The error keeps Fastify's code (plugins/errors.ts maps it).
 */
function explained(err: Error & { code?: string }, text: string): Error {
  if (err.code !== 'FST_ERR_CTP_INVALID_JSON_BODY') return err;
  let reason = 'Object contains forbidden prototype property';
  try {
    JSON.parse(text);
  } catch (syntax) {
    reason = (syntax as Error).message;
  }
  return Object.assign(new SyntaxError(reason), { code: err.code, statusCode: 400 });
}

/**
 * The body parsers of both surfaces, at the root so every route gets them:
 * JSON is checked against the shape limits (json-limits.ts) before Fastify's own
 * parser (which keeps refusing `__proto__` and `constructor.prototype` keys), and
 * form fields that hold JSON (registry forms send `tool_list`, `metadata` so)
 * get the same check. A refused body never reaches a handler, so nothing is stored.
 */
export default fp<{ limits: JsonLimits }>(
  async (app, opts) => {
    const limits = opts.limits;
    const parseJson = app.getDefaultJsonParser('error', 'error');
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      const v = scanJsonLimits(body as string, limits);
      if (v) return done(limitError(body as string, v, limits, []), undefined);
      parseJson(request, body as string, (err, value) => {
        if (err) return done(explained(err, body as string), undefined);
        // Checks on the parsed value, each walked only when the text could hold what it looks for.
        for (const c of VALUE_CHECKS) {
          const at = c.maybe.test(body as string) ? pathWhere(value, c.bad) : undefined;
          if (at) return done(unprocessable(c.code, [{ loc: ['body', ...at], msg: c.msg, type: c.type }]), undefined);
        }
        done(null, value);
      });
    });

    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
      // maxKeys 0: querystring would otherwise drop fields past 1000 without a word; the limit below says so instead.
      const fields = parseForm(body as string, '&', '=', { maxKeys: 0 });
      const names = Object.keys(fields);
      if (names.length > limits.maxObjectKeys) {
        return done(
          unprocessable('SB_ERR_JSON_OBJECT_TOO_LARGE', [
            {
              loc: ['body'],
              msg: `The form has more than ${limits.maxObjectKeys} fields (limit ${LIMIT_KEYS.keys})`,
              type: 'json_object_size',
            },
          ]),
          undefined,
        );
      }
      for (const name of names) {
        const value = fields[name];
        for (const text of Array.isArray(value) ? value : [value]) {
          if (typeof text !== 'string') continue;
          const first = text.trimStart()[0];
          if (first !== '{' && first !== '[') continue;
          const v = scanJsonLimits(text, limits);
          if (v) return done(limitError(text, v, limits, [name]), undefined);
        }
      }
      done(null, fields);
    });
  },
  { name: 'switchboard-body-parsers' },
);
