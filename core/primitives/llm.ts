import { Type, type Static } from '@sinclair/typebox';
import type { ProviderBase } from '../provider.ts';

export const ToolCall = Type.Object({
  id: Type.String(),
  name: Type.String(),
  input: Type.Record(Type.String(), Type.Unknown()),
});
export type ToolCall = Static<typeof ToolCall>;

export const ToolResult = Type.Object({
  tool_use_id: Type.String(),
  content: Type.String(),
  is_error: Type.Optional(Type.Boolean()),
});
export type ToolResult = Static<typeof ToolResult>;

export const ChatMessage = Type.Object({
  role: Type.Union([Type.Literal('user'), Type.Literal('assistant'), Type.Literal('system'), Type.Literal('tool')]),
  content: Type.String(),
  tool_calls: Type.Optional(Type.Array(ToolCall)),
  tool_results: Type.Optional(Type.Array(ToolResult)),
});
export type ChatMessage = Static<typeof ChatMessage>;

export const ToolDefinition = Type.Object({
  name: Type.String({ minLength: 1 }),
  description: Type.Optional(Type.String()),
  input_schema: Type.Record(Type.String(), Type.Unknown()),
});
export type ToolDefinition = Static<typeof ToolDefinition>;

export const CompletionRequest = Type.Object({
  model: Type.Optional(Type.String()),
  messages: Type.Array(ChatMessage, { minItems: 1 }),
  system: Type.Optional(Type.String()),
  tools: Type.Optional(Type.Array(ToolDefinition)),
  tool_choice: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
});
export type CompletionRequest = Static<typeof CompletionRequest>;

export const Usage = Type.Object({ prompt_tokens: Type.Integer(), completion_tokens: Type.Integer() });

export const CompletionResponse = Type.Object({
  content: Type.String(),
  model: Type.String(),
  stop_reason: Type.String(),
  tool_calls: Type.Array(ToolCall),
  usage: Usage,
});
export type CompletionResponse = Static<typeof CompletionResponse>;

/** Stream events: exactly the types of spec section 6. */
export type LlmStreamEvent =
  | { type: 'content_delta'; delta: string }
  | { type: 'tool_use_start'; id: string; name: string }
  | { type: 'tool_use_delta'; id: string; delta: string }
  | { type: 'tool_use_complete'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'message_stop'; stop_reason: string; model: string }
  | { type: 'metadata'; usage: { input_tokens: number; output_tokens: number } };

export interface LlmCapabilities {
  streaming: boolean;
  tools: boolean;
  models: boolean;
  embeddings: boolean;
  [k: string]: boolean | string | readonly string[];
}

export interface LlmProvider extends ProviderBase {
  readonly kind: 'llm';
  readonly capabilities: LlmCapabilities;
  complete(req: CompletionRequest, opts?: { signal?: AbortSignal }): Promise<CompletionResponse>;
  stream(req: CompletionRequest, opts?: { signal?: AbortSignal }): AsyncIterable<LlmStreamEvent>;
  models(): Promise<string[]>;
  embed?(texts: string[], opts?: { model?: string }): Promise<number[][]>;
}
