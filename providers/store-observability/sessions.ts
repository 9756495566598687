import type { SessionDetail, SessionSummary, Trace } from '../../core/primitives/observability.ts';
import type { Collections } from './records.ts';
import { tokensOf } from './records.ts';
import { unwrap } from './list.ts';

/**
 * Sessions are not stored: they are the traces that carry a session_id,
 * grouped. With `userId`, only that user's traces count (a session id may be
 * reused by several users). Tokens come from the generations of the traces.
 */
export async function sessionsOf(
  cols: Collections,
  userId?: string,
  only?: string,
): Promise<Map<string, { summary: SessionSummary; traces: Trace[] }>> {
  const by = new Map<string, { summary: SessionSummary; traces: Trace[] }>();
  const sessionOfTrace = new Map<string, string>();
  for await (const [, stored] of cols.traces.entries()) {
    const t = unwrap(stored);
    if (!t.session_id || (userId !== undefined && t.user_id !== userId)) continue;
    if (only !== undefined && t.session_id !== only) continue;
    sessionOfTrace.set(t.trace_id, t.session_id);
    // Generation spans carry their usage in the trace itself (auto_trace); explicit generations are added below.
    const spanTokens = t.spans.reduce(
      (n, s) => n + ((s.metadata as { type?: unknown } | undefined)?.type === 'generation' ? tokensOf(s.usage) : 0),
      0,
    );
    const s = by.get(t.session_id);
    if (!s) {
      by.set(t.session_id, {
        summary: {
          session_id: t.session_id,
          user_id: t.user_id,
          trace_count: 1,
          first_seen: t.timestamp,
          last_activity: t.timestamp,
          total_tokens: spanTokens,
        },
        traces: [t],
      });
      continue;
    }
    s.traces.push(t);
    s.summary.trace_count++;
    s.summary.total_tokens! += spanTokens;
    if (t.timestamp < s.summary.first_seen) s.summary.first_seen = t.timestamp;
    if (t.timestamp > s.summary.last_activity) {
      s.summary.last_activity = t.timestamp;
      s.summary.user_id = t.user_id;
    }
  }
  if (by.size > 0)
    for await (const [, stored] of cols.generations.entries()) {
      const g = unwrap(stored);
      const sid = sessionOfTrace.get(g.trace_id);
      if (sid !== undefined) by.get(sid)!.summary.total_tokens! += tokensOf(g.usage);
    }
  return by;
}

export function newestFirst(sessions: Iterable<{ summary: SessionSummary }>): SessionSummary[] {
  return [...sessions]
    .map((s) => s.summary)
    .sort((a, b) => b.last_activity.localeCompare(a.last_activity) || b.session_id.localeCompare(a.session_id));
}

export function detailOf(entry: { summary: SessionSummary; traces: Trace[] }): SessionDetail {
  return {
    session: entry.summary,
    traces: [...entry.traces].sort((a, b) => b.timestamp.localeCompare(a.timestamp)),
  };
}
