import { randomUUID } from 'node:crypto';
import { isAbsolute, join } from 'node:path';
import type { Branch, MemoryEvent, MemoryProvider, MemoryRecord, MemorySession } from '../../core/primitives/memory.ts';
import type { ProviderFactory } from '../../core/provider.ts';
import { JsonDocument, type Doc } from './document.ts';
import { rank } from './search.ts';

/**
 * Errors a third-party package throws without importing Switchboard: a 4xx
 * `statusCode` reaches the caller as `{detail: message, code: SB_ERR_HTTP_<code>}`.
 */
const httpError = (statusCode: number, code: string, message: string) =>
  Object.assign(new Error(message), { statusCode, code });

const sessionKey = (actor: string, session: string) => `${actor}\u0000${session}`;
const now = () => new Date().toISOString();

/** The events of one line of a conversation: the main line, or a branch (main line up to its root, then its own). */
function line(doc: Doc, actor: string, session: string, branch?: string): MemoryEvent[] {
  const all = doc.events[sessionKey(actor, session)] ?? [];
  if (branch === undefined) return all.filter((e) => e.branch === undefined);
  const b = (doc.branches[sessionKey(actor, session)] ?? []).find((x) => x.name === branch);
  if (!b) throw httpError(404, 'BRANCH_NOT_FOUND', `No branch '${branch}' in session ${session} of actor ${actor}`);
  const main = all.filter((e) => e.branch === undefined);
  const cut = main.findIndex((e) => e.event_id === b.root_event_id);
  return [...main.slice(0, cut + 1), ...all.filter((e) => e.branch === branch)];
}

function provider(name: string, doc: JsonDocument): MemoryProvider {
  const d = doc.data;
  const ns = (n: string) => (d.records[n] ??= {});
  const appendEvent = (
    x: Doc,
    actor: string,
    session: string,
    messages: MemoryEvent['messages'],
    metadata: Record<string, unknown>,
    branch?: string,
  ) => {
    const e: MemoryEvent = {
      event_id: randomUUID(),
      actor_id: actor,
      session_id: session,
      messages,
      metadata,
      timestamp: now(),
      ...(branch !== undefined ? { branch } : {}),
    };
    (x.events[sessionKey(actor, session)] ??= []).push(e);
    return e;
  };

  return {
    name,
    type: 'json_file',
    kind: 'memory',
    // Declared honestly: the HTTP layer answers 501 for resources before calling us.
    capabilities: { search: 'lexical', events: true, branches: true, resources: false, durable: true },

    store: (n, req) =>
      doc.change(() => {
        const prev = ns(n)[req.key];
        const t = now();
        const r: MemoryRecord = {
          namespace: n,
          key: req.key,
          content: req.content,
          metadata: req.metadata ?? {},
          created_at: prev?.created_at ?? t,
          updated_at: t,
        };
        ns(n)[req.key] = r;
        return r;
      }),
    retrieve: async (n, key) => d.records[n]?.[key],
    list: async (n, page) => {
      const all = Object.values(d.records[n] ?? {}).sort((a, b) => a.key.localeCompare(b.key));
      return { records: all.slice(page.offset, page.offset + page.limit), total: all.length };
    },
    search: async (n, req) => rank(Object.values(d.records[n] ?? {}), req.query, req.top_k ?? 10, req.filters),
    delete: (n, key) =>
      doc.change(() => {
        if (!d.records[n]?.[key]) return false;
        delete d.records[n][key];
        return true;
      }),
    namespaces: async () =>
      Object.keys(d.records)
        .filter((n) => Object.keys(d.records[n]).length > 0)
        .sort(),

    createEvent: (actor, session, req) =>
      doc.change((x) => {
        if (req.branch !== undefined) line(x, actor, session, req.branch);
        return appendEvent(x, actor, session, req.messages, req.metadata ?? {}, req.branch);
      }),
    listEvents: async (actor, session, opts) => {
      const events = line(d, actor, session, opts?.branch);
      return opts?.limit ? events.slice(-opts.limit) : events;
    },
    getEvent: async (actor, session, id) => (d.events[sessionKey(actor, session)] ?? []).find((e) => e.event_id === id),
    deleteEvent: (actor, session, id) =>
      doc.change((x) => {
        const list = x.events[sessionKey(actor, session)] ?? [];
        const i = list.findIndex((e) => e.event_id === id);
        if (i < 0) return false;
        list.splice(i, 1);
        return true;
      }),
    turns: async (actor, session, k, opts) =>
      line(d, actor, session, opts?.branch)
        .slice(-k)
        .map((e) => ({ messages: e.messages })),
    actors: async () => [...new Set(Object.values(d.events).flatMap((list) => list.map((e) => e.actor_id)))].sort(),
    sessions: async (actor) =>
      Object.values(d.events)
        .filter((list) => list.length > 0 && list[0].actor_id === actor)
        .map((list): MemorySession => {
          const main = list.filter((e) => e.branch === undefined);
          return {
            session_id: list[0].session_id,
            actor_id: actor,
            message_count: main.reduce((n, e) => n + e.messages.length, 0),
            last_activity: list.reduce((t, e) => (e.timestamp > t ? e.timestamp : t), list[0].timestamp),
          };
        }),
    deleteSession: (actor, session) =>
      doc.change((x) => {
        const k = sessionKey(actor, session);
        const existed = (x.events[k]?.length ?? 0) > 0;
        delete x.events[k];
        delete x.branches[k];
        return existed;
      }),

    createBranch: (actor, session, req) =>
      doc.change((x) => {
        const k = sessionKey(actor, session);
        const root = (x.events[k] ?? []).find((e) => e.event_id === req.root_event_id && e.branch === undefined);
        if (!root)
          throw httpError(
            404,
            'EVENT_NOT_FOUND',
            `No event ${req.root_event_id} on the main line of session ${session} to fork from`,
          );
        const branches = (x.branches[k] ??= []);
        if (branches.some((b) => b.name === req.name))
          throw httpError(409, 'BRANCH_EXISTS', `Branch '${req.name}' already exists in this session`);
        const b: Branch = {
          name: req.name,
          root_event_id: root.event_id,
          actor_id: actor,
          session_id: session,
          created_at: now(),
        };
        branches.push(b);
        if (req.messages?.length) appendEvent(x, actor, session, req.messages, {}, req.name);
        return b;
      }),
    listBranches: async (actor, session) => [...(d.branches[sessionKey(actor, session)] ?? [])],

    healthcheck: async () => 'ok',
    close: async () => {},
  };
}

/**
 * `json_file`: memory in one JSON file. Options: `file` (absolute, or relative
 * to DATA_DIR; default `memory-<instance>.json` under DATA_DIR). Fine for a
 * laptop or a demo; every write rewrites the whole file.
 */
export const jsonFileMemory: ProviderFactory<MemoryProvider> = {
  type: 'json_file',
  kind: 'memory',
  autoInstance: true,
  description: 'Example third-party provider: memory in one JSON file under DATA_DIR',
  create(name, options, ctx) {
    const file = options.file ?? `memory-${name}.json`;
    if (typeof file !== 'string' || !file)
      throw new Error(`memory provider '${name}' (json_file): option 'file' must be a path`);
    return provider(name, new JsonDocument(isAbsolute(file) ? file : join(ctx.dataDir, file)));
  },
};
