import { randomUUID } from 'node:crypto';
import { forbidden } from '../../../../core/errors.ts';
import type { PrimitiveName } from '../../../../core/primitives.ts';
import type { Principal } from '../../../../core/primitives/auth.ts';
import type { LlmProvider } from '../../../../core/primitives/llm.ts';
import type { MemoryProvider } from '../../../../core/primitives/memory.ts';
import type { Span } from '../../../../core/primitives/observability.ts';
import type { ProviderBase } from '../../../../core/provider.ts';
import type { SwitchboardContext } from '../../../context.ts';
import type { AgentSpec, ChatResponse } from '../schemas.ts';
import { bindTools, type BindEnv, type BoundTool, type ToolCallEnv } from './catalog.ts';
import { RunCancelled, type Emit } from './events.ts';
import { History, type Turn } from './history.ts';
import { runLoop, type LoopInput } from './loop.ts';
import { enforcementGate, type ToolGate } from '../../enforcement.ts';
import type { PolicyProvider } from '../../../../core/primitives/policy.ts';
import { SessionIndex, type SessionEntry } from './sessions.ts';
import { AgentSpecs } from './spec-store.ts';
import { sendTrace } from './trace.ts';
import './tools/index.ts';

/** Who is calling and how they route providers; kept for background runs after the request ends. */
export interface Caller {
  principal: Principal;
  headers: Record<string, string | undefined>;
}

export interface ChatOptions {
  emit?: Emit;
  signal?: AbortSignal;
  stream?: boolean;
  /** Delegation depth (0 = the agent the caller talks to). */
  depth?: number;
  /** Tools a caller adds for this run only (a team planner's create_task), after the agent's own. */
  extraTools?: BoundTool[];
}

/** What is resolved before a chat starts, so routing and access errors answer as HTTP errors. */
export interface Prepared {
  spec: AgentSpec;
  caller: Caller;
  session: Pick<SessionEntry, 'agent_name' | 'session_id' | 'actor_id' | 'history'>;
  llm: LlmProvider;
  memory?: MemoryProvider;
  /** The session id was generated here: nothing to load, nothing to merge with. */
  fresh: boolean;
}

/** Only routing headers are kept: credentials never outlive the request in a stored run. */
export function routingHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(headers)) if (k.startsWith('x-provider')) out[k] = Array.isArray(v) ? v[0] : v;
  return out;
}

export type { MetadataFilter } from '../../../../core/metadata-denylist.ts';
import type { MetadataFilter } from '../../../../core/metadata-denylist.ts';

/** The agent runtime of one process: specs, sessions, history, and the chat loop with its hooks. */
export class AgentRuntime {
  readonly specs: AgentSpecs;
  readonly sessions: SessionIndex;
  readonly history: History;

  constructor(
    private readonly sb: SwitchboardContext,
    readonly stripMetadata: MetadataFilter,
  ) {
    this.specs = new AgentSpecs(sb.store);
    this.sessions = new SessionIndex(sb.store);
    this.history = new History(sb.store);
  }

  private enforcing?: Promise<ToolGate | null>;

  /** Tool calls inside runs are decided like /api/v1 requests when enforcement is on (issue 23); undefined when off. */
  private async toolGate(spec: AgentSpec, caller: Caller): Promise<LoopInput['gate']> {
    const gate = await (this.enforcing ??= enforcementGate(this.sb.providers.get<PolicyProvider>('policy')).then(
      (on) => on?.gate ?? null,
    ));
    if (!gate) return undefined;
    const p = caller.principal;
    return (tool, args) =>
      gate({
        principal: `${p.type === 'service' ? 'Service' : 'User'}::${JSON.stringify(p.id)}`,
        principal_parents: p.groups.map((g) => `Group::${JSON.stringify(g)}`),
        principal_attrs: { is_admin: p.is_admin, type: p.type },
        action: 'Action::"tools:invoke"',
        resource: `Tool::${JSON.stringify(tool)}`,
        context: {
          time: Math.floor(Date.now() / 1000),
          hour_utc: new Date().getUTCHours(),
          provider: 'default',
          agent: { __entity: { type: 'Agent', id: spec.name } },
          arguments: args,
        },
      });
  }

  resolve<P extends ProviderBase>(spec: AgentSpec, caller: Caller, primitive: PrimitiveName): P {
    return this.sb.providers.resolve<P>(primitive, caller.headers, spec.provider_overrides[primitive]);
  }

  /** The memory provider a session's history lives in (fixed when the session started). */
  historyMemory(entry: Pick<SessionEntry, 'history'>): MemoryProvider | undefined {
    return entry.history.kind === 'memory'
      ? this.sb.providers.get<MemoryProvider>('memory', entry.history.provider)
      : undefined;
  }

  async prepare(spec: AgentSpec, caller: Caller, sessionId?: string): Promise<Prepared> {
    const llm = this.resolve<LlmProvider>(spec, caller, 'llm');
    const session_id = sessionId ?? randomUUID();
    const existing = sessionId ? await this.sessions.get(spec.name, sessionId) : undefined;
    if (existing && existing.actor_id !== caller.principal.id && !caller.principal.is_admin) {
      throw forbidden(
        'SB_ERR_AGENT_SESSION_FORBIDDEN',
        `Session '${session_id}' of agent '${spec.name}' belongs to another user`,
      );
    }
    let history: SessionEntry['history'] = existing?.history ?? { kind: 'store' };
    let memory: MemoryProvider | undefined;
    if (existing) {
      memory = this.historyMemory(existing);
    } else if (spec.hooks.auto_memory && this.sb.providers.names('memory').length > 0) {
      const m = this.resolve<MemoryProvider>(spec, caller, 'memory');
      if (m.capabilities.events) {
        memory = m;
        history = { kind: 'memory', provider: m.name };
      }
    }
    const actor_id = existing?.actor_id ?? caller.principal.id;
    return {
      spec,
      caller,
      llm,
      memory,
      fresh: sessionId === undefined,
      session: { agent_name: spec.name, session_id, actor_id, history },
    };
  }

  /** The agent's tools for one run; `defer` collects cleanup (sessions tools opened) for the run's end. */
  async tools(
    spec: AgentSpec,
    caller: Caller,
    depth = 0,
    defer: (fn: () => Promise<unknown>) => void = () => {},
  ): Promise<BoundTool[]> {
    const env: BindEnv = {
      agent: spec,
      principal: caller.principal,
      depth,
      specs: this.specs,
      resolve: <P extends ProviderBase>(p: PrimitiveName) => this.resolve<P>(spec, caller, p),
      stripMetadata: this.stripMetadata,
      defer,
      runSubAgent: (name, message, call) => this.runSubAgent(name, message, caller, depth + 1, call),
    };
    return bindTools(env);
  }

  /**
   * One chat turn: history in, tool loop, turn stored (auto_memory), trace sent
   * (auto_trace). On cancellation the turn is stored up to the cancel point and
   * RunCancelled is rethrown.
   */
  async chat(p: Prepared, message: string, opts: ChatOptions = {}): Promise<ChatResponse> {
    const { spec, caller, session } = p;
    const emit = opts.emit ?? (() => {});
    const signal = opts.signal ?? new AbortController().signal;
    const past = p.fresh ? [] : await this.history.load(session, p.memory);
    const cleanups: Array<() => Promise<unknown>> = [];
    const tools = [
      ...(await this.tools(spec, caller, opts.depth ?? 0, (fn) => cleanups.push(fn))),
      ...(opts.extraTools ?? []),
    ];
    let partial = '';
    const spans: Span[] = [];
    const started = new Date().toISOString();
    const save = async (assistant: string) => {
      const turn: Turn[] = [{ role: 'user', content: message }];
      if (assistant) turn.push({ role: 'assistant', content: assistant });
      await Promise.all([
        this.history.append(session, turn, p.memory, p.fresh),
        this.sessions.touch(session, turn.length, p.fresh),
      ]);
    };
    let result: Awaited<ReturnType<typeof runLoop>>;
    try {
      result = await runLoop({
        spec,
        messages: [...past.map((t) => ({ role: t.role, content: t.content })), { role: 'user', content: message }],
        tools,
        llm: p.llm,
        emit,
        stream: opts.stream ?? false,
        signal,
        onText: (t) => (partial += t),
        gate: await this.toolGate(spec, caller),
        ...(spec.hooks.auto_trace ? { observe: (span: Span) => spans.push(span) } : {}),
      });
    } catch (err) {
      if (err instanceof RunCancelled) await save(partial);
      throw err;
    } finally {
      await Promise.allSettled(cleanups.map((fn) => fn()));
    }
    const [, traceId] = await Promise.all([
      save(result.response),
      spec.hooks.auto_trace ? this.trace(spec, caller, session.session_id, message, result, spans, started) : undefined,
    ]);
    const metadata: Record<string, unknown> = { model: spec.model, llm_provider: p.llm.name };
    if (result.max_turns_reached) metadata.max_turns_reached = true;
    if (traceId) metadata.trace_id = traceId;
    return {
      response: result.response,
      session_id: session.session_id,
      agent_name: spec.name,
      turns_used: result.turns_used,
      tools_called: result.tools_called,
      artifacts: [],
      metadata,
    };
  }

  private async trace(
    spec: AgentSpec,
    caller: Caller,
    sessionId: string,
    input: string,
    result: Awaited<ReturnType<typeof runLoop>>,
    spans: Span[],
    started: string,
  ): Promise<string | undefined> {
    let obs: ProviderBase | undefined;
    try {
      obs = this.resolve(spec, caller, 'observability');
    } catch {
      return undefined; // no observability provider: tracing is best effort by design
    }
    try {
      return await sendTrace(obs, {
        name: `agent:${spec.name}`,
        user_id: caller.principal.id,
        session_id: sessionId,
        input,
        output: result.response,
        tags: ['agent', spec.name],
        // One generation span per LLM turn and one span per tool call, in the order they ended (loop.ts).
        spans,
        metadata: {
          model: spec.model,
          agent_name: spec.name,
          turns_used: result.turns_used,
          tools_called: result.tools_called,
          started_at: started,
        },
      });
    } catch {
      return undefined;
    }
  }

  /** A sub-agent answers one message with a fresh context; its tokens and tool calls surface in the parent stream. */
  private async runSubAgent(
    name: string,
    message: string,
    caller: Caller,
    depth: number,
    call: ToolCallEnv,
  ): Promise<string> {
    const spec = (await this.specs.raw(name))!;
    const llm = this.resolve<LlmProvider>(spec, caller, 'llm');
    const cleanups: Array<() => Promise<unknown>> = [];
    const tools = await this.tools(spec, caller, depth, (fn) => cleanups.push(fn));
    const emit: Emit = (ev) => {
      if (ev.type === 'token') call.emit({ type: 'sub_agent_token', agent: name, content: ev.content });
      else if (ev.type === 'tool_call_start') call.emit({ type: 'sub_agent_tool', agent: name, name: ev.name });
      else if (ev.type === 'sub_agent_token' || ev.type === 'sub_agent_tool') call.emit(ev);
    };
    try {
      const r = await runLoop({
        spec,
        messages: [{ role: 'user', content: message }],
        tools,
        llm,
        emit,
        stream: true,
        signal: call.signal,
        gate: await this.toolGate(spec, caller),
      });
      return r.response;
    } finally {
      await Promise.allSettled(cleanups.map((fn) => fn()));
    }
  }
}
