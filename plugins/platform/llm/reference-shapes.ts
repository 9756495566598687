import { Type } from '@sinclair/typebox';
import { CompletionRequest } from '../../../core/primitives/llm.ts';

/**
 * `tool_choice` as clients send it: the object form providers take
 * (`{type: auto|any|none|tool, name?}`) or the reference's strings `"auto"`,
 * `"any"`, `"none"` (`"required"` is OpenAI's word for `any`); any other string
 * names the tool to call, as the reference reads it.
 */
export const ToolChoiceInput = Type.Union([
  Type.String({ minLength: 1, description: 'auto, any, none, required, or the name of a tool' }),
  Type.Record(Type.String(), Type.Unknown(), { description: '{type: auto|any|none|tool, name?}' }),
]);

/** The route body: the provider-facing request, with tool_choice in either form. */
export const CompletionRequestBody = Type.Composite([
  Type.Omit(CompletionRequest, ['tool_choice']),
  Type.Object({ tool_choice: Type.Optional(ToolChoiceInput) }),
]);

const NAMED: Record<string, string> = { auto: 'auto', any: 'any', required: 'any', none: 'none' };

/** The object form of a tool_choice given as a string; objects pass unchanged. */
export function toolChoiceObject(choice: string | Record<string, unknown>): Record<string, unknown> {
  if (typeof choice !== 'string') return choice;
  // Own keys only: a tool named `constructor` is a tool, not Object.prototype's member.
  const named = Object.hasOwn(NAMED, choice) ? NAMED[choice] : undefined;
  return named ? { type: named } : { type: 'tool', name: choice };
}

/**
 * preValidation: the reference names a tool's JSON Schema `parameters` (and
 * sends tools without one); taken as `input_schema` when that is not given.
 */
export async function referenceToolShapes(request: { body: unknown }): Promise<void> {
  // Cast, not typed: a preValidation hook sees the body before the schema has judged it; the checks below guard it.
  const body = request.body as { tools?: unknown } | null;
  if (!body || typeof body !== 'object' || !Array.isArray(body.tools)) return;
  for (const tool of body.tools as Record<string, unknown>[]) {
    if (!tool || typeof tool !== 'object' || tool.input_schema != null) continue;
    tool.input_schema = tool.parameters && typeof tool.parameters === 'object' ? tool.parameters : { type: 'object' };
    delete tool.parameters;
  }
}
