import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, request } from '../api.ts';
import { ErrorBox, PageHeader, useApi } from '../components/common.tsx';
import { SelectFilter } from '../components/list.tsx';
import { navigate, setQuery } from '../router.ts';
import { Badge, enc, href, queryParam, withQuery } from './bits.tsx';
import {
  type ChatEvent,
  type Message,
  type Transcript,
  addUserMessage,
  applyEvent,
  emptyTranscript,
  fromHistory,
  isTerminal,
} from './chat-state.ts';
import { readSse } from './sse.ts';

/** How often a dropped stream is rejoined before the page gives up and says so. */
const MAX_REJOINS = 5;

function ToolCallCard({ call }: { call: NonNullable<Extract<Message['parts'][number], { kind: 'tool' }>['call']> }) {
  const running = call.result === undefined;
  return (
    <div class={`pf-tool ${running ? 'pf-tool-running' : ''}`} data-tool={call.name}>
      <div class="pf-tool-head">
        <span class="pf-tool-icon" aria-hidden="true">
          ⚙
        </span>
        <span>
          {call.agent ? `${call.agent} → ` : ''}
          <code>{call.name}</code>
        </span>
        <Badge value={running ? 'running' : 'done'} label={running ? 'running' : 'done'} />
      </div>
      {running ? null : (
        <details class="pf-tool-result">
          <summary>Result</summary>
          <pre>{call.result}</pre>
        </details>
      )}
    </div>
  );
}

function MessageView({ m, live }: { m: Message; live: boolean }) {
  const caret = <span class="pf-caret" aria-hidden="true" />;
  const last = m.parts.length - 1;
  return (
    <li class={`pf-msg pf-msg-${m.role}`}>
      <div class="pf-msg-role">{m.role === 'user' ? 'You' : 'Agent'}</div>
      <div class="pf-msg-body">
        {m.parts.map((p, i) =>
          p.kind === 'text' ? (
            <div class={p.agent ? 'pf-msg-text pf-sub-agent' : 'pf-msg-text'} key={i}>
              {p.agent ? <span class="muted">{p.agent}: </span> : null}
              {p.text}
              {live && i === last ? caret : null}
            </div>
          ) : (
            <ToolCallCard call={p.call} key={p.call.id} />
          ),
        )}
        {/* Before the first token, or while a tool runs, the caret waits on a line of its own. */}
        {live && m.parts[last]?.kind !== 'text' ? caret : null}
      </div>
    </li>
  );
}

/**
 * Chat with an agent over the streaming API: tokens and tool calls appear as they happen. The session id lives in
 * the URL (`?agent=x&session=y`), so a reload finds the session again: its history is loaded and a run still in
 * progress is rejoined through GET /agents/{name}/sessions/{id}/stream, which replays the run and follows it.
 */
export function ChatPage() {
  const agent = queryParam('agent');
  const [transcript, setTranscript] = useState<Transcript>(emptyTranscript());
  const [draft, setDraft] = useState('');
  const [error, setError] = useState<unknown>();
  const [phase, setPhase] = useState<'ready' | 'loading' | 'sending' | 'rejoining'>('loading');
  const abort = useRef<AbortController | undefined>(undefined);
  const [agents] = useApi(() => api<{ agents: Array<{ name: string }> }>('/api/v1/agents'), []);
  const input = useRef<HTMLTextAreaElement>(null);
  const listRef = useRef<HTMLOListElement>(null);

  const sessionPath = (sid: string) => `/api/v1/agents/${enc(agent!)}/sessions/${enc(sid)}`;

  /** Folds a stream's events into the transcript; true when the run ended (done, error, cancelled). */
  const consume = async (res: Response, signal: AbortSignal): Promise<boolean> => {
    if (!res.body) return false;
    for await (const raw of readSse(res.body, signal)) {
      const ev = raw as ChatEvent;
      setTranscript((t) => applyEvent(t, ev));
      if (ev.type === 'stream_start' && ev.session_id) setQuery({ session: ev.session_id });
      if (isTerminal(ev)) return true;
    }
    return false;
  };

  /**
   * A rejoined run's question was sent before the reload and is not in the replay; once the run has ended it is
   * in the stored history, so the history goes back in front of the streamed answer (which keeps its tool calls).
   */
  const restoreAskedMessage = async (sid: string) => {
    const h = await api<{ messages: Array<{ role: string; content: string }> }>(sessionPath(sid)).catch(
      () => undefined,
    );
    const stored = h ? fromHistory(h.messages) : [];
    if (stored.at(-1)?.role !== 'assistant') return;
    setTranscript((t) => {
      const answer = t.messages.at(-1);
      return answer?.role === 'assistant' ? { ...t, messages: [...stored.slice(0, -1), answer] } : t;
    });
  };

  /**
   * Rejoins the session's run: the transcript goes back to where the run began and the replay fills it in
   * again. Repeats while the stream drops before the run ends.
   */
  const rejoin = async (sid: string, before: Message[]) => {
    for (let attempt = 0; attempt < MAX_REJOINS; attempt++) {
      const ctl = new AbortController();
      abort.current = ctl;
      setPhase('rejoining');
      setTranscript((t) => ({
        ...t,
        messages: before,
        state: 'streaming',
        notice: 'Reconnecting to the running session…',
      }));
      // Back off between attempts, so a network that is down for a moment is not hammered.
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(500 * 2 ** attempt, 8000)));
      if (ctl.signal.aborted) return;
      try {
        const res = await request(`${sessionPath(sid)}/stream`, {
          headers: { accept: 'text/event-stream' },
          signal: ctl.signal,
        });
        setPhase('sending');
        if (await consume(res, ctl.signal)) {
          await restoreAskedMessage(sid);
          return;
        }
      } catch (err) {
        if (ctl.signal.aborted) return;
        if (err instanceof ApiError && err.status < 500) throw err;
      }
      if (ctl.signal.aborted) return;
      let status: { status: string };
      try {
        status = await api<{ status: string }>(`${sessionPath(sid)}/status`);
      } catch (err) {
        if (err instanceof ApiError && err.status < 500) throw err;
        continue; // the network or the server is still away: try again
      }
      if (status.status !== 'running') {
        // The run ended while we were away: its stored history is the truth.
        const h = await api<{ messages: Array<{ role: string; content: string }> }>(sessionPath(sid));
        setTranscript((t) => ({ ...t, messages: fromHistory(h.messages), state: 'done', notice: undefined }));
        return;
      }
    }
    throw new Error('The connection keeps dropping; reload the page to follow the run again.');
  };

  // On entry (and when the agent changes): the session in the URL, if any, with its history and running run.
  // Runs once per agent; the session is read from the URL at that moment.
  useEffect(() => {
    const sid = queryParam('session');
    setTranscript({ ...emptyTranscript(), session_id: sid });
    setError(undefined);
    if (!agent || !sid) {
      setPhase('ready');
      return;
    }
    let live = true;
    (async () => {
      try {
        const h = await api<{ messages: Array<{ role: string; content: string }> }>(sessionPath(sid));
        const before = fromHistory(h.messages);
        if (!live) return;
        setTranscript((t) => ({ ...t, messages: before }));
        const st = await api<{ status: string }>(`${sessionPath(sid)}/status`);
        if (live && st.status === 'running') await rejoin(sid, before);
      } catch (err) {
        if (live) setError(err);
      } finally {
        if (live) setPhase('ready');
      }
    })();
    return () => {
      live = false;
      abort.current?.abort();
    };
  }, [agent]);

  // Follow the stream only while the reader is at the bottom: someone who scrolled up to read stays where they are.
  const pinned = useRef(true);
  useEffect(() => {
    const list = listRef.current;
    if (list && pinned.current) list.scrollTop = list.scrollHeight;
  }, [transcript]);

  const send = async (e?: Event) => {
    e?.preventDefault();
    const text = draft.trim();
    if (!text || !agent || phase !== 'ready') return;
    const sid = transcript.session_id;
    const before = addUserMessage(transcript, text).messages;
    setTranscript((t) => addUserMessage(t, text));
    setDraft('');
    setError(undefined);
    setPhase('sending');
    const ctl = new AbortController();
    abort.current = ctl;
    let started: string | undefined = sid;
    try {
      const res = await request(`/api/v1/agents/${enc(agent)}/chat/stream`, {
        method: 'POST',
        json: sid ? { message: text, session_id: sid } : { message: text },
        headers: { accept: 'text/event-stream' },
        signal: ctl.signal,
      });
      let ended = false;
      try {
        ended = await consume(res, ctl.signal);
      } catch (err) {
        if (ctl.signal.aborted) throw err;
        // A network error mid-stream: handled below like a stream that ended early.
      }
      started = new URLSearchParams(window.location.search).get('session') ?? started;
      // The connection dropped mid-run: the run goes on server-side, so follow it again.
      if (!ended && !ctl.signal.aborted) {
        if (!started) throw new Error('The connection dropped before the run started; send the message again.');
        await rejoin(started, before);
      }
    } catch (err) {
      if (!ctl.signal.aborted) {
        setError(err);
        setTranscript((t) => ({ ...t, state: 'error' }));
      }
    } finally {
      setPhase('ready');
      input.current?.focus();
    }
  };

  const cancel = async () => {
    const sid = transcript.session_id;
    if (!sid || !agent) return;
    try {
      await api(`${sessionPath(sid)}/run`, { method: 'DELETE' });
    } catch (err) {
      setError(err);
    }
  };

  const newSession = () => {
    abort.current?.abort();
    navigate(withQuery('/platform/chat', { agent }));
    setTranscript(emptyTranscript());
    setPhase('ready');
  };

  const busy = phase !== 'ready';
  const streaming = transcript.state === 'streaming';
  const last = transcript.messages.length - 1;

  return (
    <section class="pf-page pf-chat">
      <PageHeader
        title={agent ? `Chat with ${agent}` : 'Chat'}
        sub={
          transcript.session_id ? `Session ${transcript.session_id}` : 'A new session starts with your first message.'
        }
      >
        {agent ? (
          <>
            <a class="btn" href={href('/platform/sessions', { agent })}>
              Sessions
            </a>
            <a class="btn" href={href(`/platform/agents/${enc(agent)}`)}>
              Edit agent
            </a>
            <button type="button" class="btn" onClick={newSession} disabled={phase === 'rejoining'}>
              New session
            </button>
          </>
        ) : null}
      </PageHeader>
      <div class="pf-toolbar">
        <SelectFilter
          id="pf-chat-agent"
          label="Agent"
          value={agent ?? ''}
          placeholder="Choose an agent…"
          options={(agents?.agents ?? []).map((a) => a.name)}
          onChange={(name) => navigate(withQuery('/platform/chat', { agent: name }))}
        />
        {transcript.state !== 'idle' ? (
          <span class="pf-run-state" data-state={transcript.state}>
            <span class="sr-only">Run state: </span>
            <Badge value={transcript.state} />
          </span>
        ) : null}
        {transcript.trace_id ? (
          <a href={href(`/platform/traces/${enc(transcript.trace_id)}`)}>Trace of the last run</a>
        ) : null}
      </div>
      <ErrorBox error={error} />
      {transcript.notice ? (
        <div
          class={`alert ${transcript.state === 'error' ? 'error' : 'info'}`}
          role={transcript.state === 'error' ? 'alert' : 'status'}
        >
          {transcript.notice}
        </div>
      ) : null}
      {agent ? (
        <>
          <ol
            // biome-ignore lint/a11y/noNoninteractiveTabindex: a keyboard user must be able to scroll a long conversation (axe scrollable-region-focusable)
            tabIndex={0}
            class="pf-transcript"
            ref={listRef}
            aria-label="Conversation"
            aria-live="polite"
            aria-busy={streaming}
            onScroll={(e) => {
              const el = e.currentTarget;
              pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
            }}
          >
            {transcript.messages.length === 0 && !busy ? <li class="pf-empty">Say something to {agent}.</li> : null}
            {transcript.messages.map((m, i) => (
              <MessageView m={m} key={i} live={streaming && i === last && m.role === 'assistant'} />
            ))}
          </ol>
          <form class="pf-composer" onSubmit={send}>
            <label for="pf-chat-input" class="sr-only">
              Message to {agent}
            </label>
            <textarea
              id="pf-chat-input"
              ref={input}
              rows={2}
              placeholder={`Message ${agent} (Enter sends, Shift+Enter for a new line)`}
              value={draft}
              onInput={(e) => setDraft((e.target as HTMLTextAreaElement).value)}
              onKeyDown={(e) => {
                if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) void send(e);
              }}
            />
            {streaming && transcript.session_id ? (
              <button type="button" class="btn danger" onClick={cancel}>
                Stop
              </button>
            ) : null}
            <button type="submit" class="btn primary" disabled={busy || !draft.trim()}>
              {busy ? 'Running…' : 'Send'}
            </button>
          </form>
        </>
      ) : (
        <p class="pf-empty">
          Choose an agent to chat with, or <a href={href('/platform/new-agent')}>create one</a>.
        </p>
      )}
    </section>
  );
}
