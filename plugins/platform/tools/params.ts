import { Ajv, type ValidateFunction } from 'ajv';
import { isDeepFrozen } from '../../../core/deep-frozen.ts';
import { badRequest } from '../../../core/errors.ts';

/**
 * Tool input schemas are user-supplied JSON Schema, so they get their own Ajv
 * (not Fastify's route compiler): lenient about unknown keywords and formats,
 * strict about the params themselves.
 */
const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
const cache = new Map<string, ValidateFunction>();
const CACHE_LIMIT = 500;

// A schema object seen before (providers that keep their tool records, e.g. the registry catalog) skips the JSON key.
const byObject = new WeakMap<object, ValidateFunction>();

function compile(schema: Record<string, unknown>): ValidateFunction {
  const seen = byObject.get(schema);
  if (seen) return seen;
  const key = JSON.stringify(schema);
  let fn = cache.get(key);
  if (!fn) {
    fn = ajv.compile(schema);
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
    cache.set(key, fn);
  }
  // Only objects that cannot change under the memo: a mutable schema is keyed by its JSON every time.
  if (isDeepFrozen(schema)) byObject.set(schema, fn);
  return fn;
}

/** 400 at registration when the input_schema is not a usable JSON Schema. */
export function checkInputSchema(toolName: string, schema: Record<string, unknown>): void {
  try {
    compile(schema);
  } catch (err) {
    throw badRequest(
      'SB_ERR_TOOLS_INVALID_SCHEMA',
      `input_schema of tool '${toolName}' is not a valid JSON Schema: ${(err as Error).message}`,
      err,
    );
  }
}

/** 400 listing every way the params break the tool's input_schema. */
export function checkParams(toolName: string, schema: Record<string, unknown>, params: Record<string, unknown>): void {
  let validate: ValidateFunction;
  try {
    validate = compile(schema);
  } catch (err) {
    throw badRequest(
      'SB_ERR_TOOLS_INVALID_SCHEMA',
      `Tool '${toolName}' has an unusable input_schema: ${(err as Error).message}`,
      err,
    );
  }
  if (validate(params)) return;
  const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`.trim());
  throw badRequest('SB_ERR_TOOLS_INVALID_PARAMS', `Invalid parameters for tool '${toolName}': ${problems.join('; ')}`);
}
