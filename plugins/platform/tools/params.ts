import { Ajv, type ValidateFunction } from 'ajv';
import { badRequest } from '../../../core/errors.ts';

/**
 * Tool input schemas are user-supplied JSON Schema, so they get their own Ajv
 * (not Fastify's route compiler): lenient about unknown keywords and formats,
 * strict about the params themselves.
 */
const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
const cache = new Map<string, ValidateFunction>();
const CACHE_LIMIT = 500;

function compile(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let fn = cache.get(key);
  if (!fn) {
    fn = ajv.compile(schema);
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
    cache.set(key, fn);
  }
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
