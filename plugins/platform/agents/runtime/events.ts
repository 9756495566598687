/** Chat stream events (ANCHOR-FACTS): each is sent as `data: <json>\n\n` and kept in the run's event log. */
export type ChatEvent =
  | { type: 'stream_start'; session_id: string; run_id?: string }
  | { type: 'token'; content: string }
  | { type: 'tool_call_start'; name: string; id: string }
  | { type: 'tool_call_result'; name: string; id: string; result: string }
  | { type: 'sub_agent_token'; agent: string; content: string }
  | { type: 'sub_agent_tool'; agent: string; name: string }
  | {
      type: 'done';
      response: string;
      session_id: string;
      agent_name: string;
      turns_used: number;
      tools_called: string[];
      artifacts: Array<Record<string, unknown>>;
      metadata: Record<string, unknown>;
    }
  | { type: 'error'; detail: string }
  | { type: 'cancelled'; session_id?: string }
  | { type: 'run_resumed'; run_id: string };

export type Emit = (event: ChatEvent) => void;

export const TERMINAL_EVENTS = new Set(['done', 'error', 'cancelled']);

export class RunCancelled extends Error {
  constructor() {
    super('The run was cancelled');
    this.name = 'RunCancelled';
  }
}
