import { Type, type Static } from '@sinclair/typebox';
import type { ProviderBase } from '../provider.ts';

const Config = Type.Record(Type.String(), Type.Unknown());

export const Viewport = Type.Object({
  width: Type.Integer({ minimum: 1, maximum: 10000 }),
  height: Type.Integer({ minimum: 1, maximum: 10000 }),
});
export type Viewport = Static<typeof Viewport>;

/** Spec 2.4: every field optional; the session id is generated when absent. */
export const StartSessionRequest = Type.Object({
  session_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.:-]+$' })),
  config: Type.Optional(Config),
  viewport: Type.Optional(Viewport),
});
export type StartSessionRequest = Static<typeof StartSessionRequest>;

export const BrowserSession = Type.Object({
  session_id: Type.String(),
  owner_id: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('stopped')]),
  created_at: Type.String({ format: 'date-time' }),
  viewport: Type.Union([Viewport, Type.Null()]),
  config: Config,
  last_used_at: Type.Optional(Type.String({ format: 'date-time', description: 'Last page action on the session' })),
  url: Type.Optional(Type.String({ description: 'The page currently shown' })),
  title: Type.Optional(Type.String()),
});
export type BrowserSession = Static<typeof BrowserSession>;

export const LiveView = Type.Object({
  session_id: Type.String(),
  url: Type.String({
    description: 'Signed viewer URL; it carries no other credential and stops working at expires_at',
  }),
  expires: Type.Integer({ description: 'Seconds the URL stays valid' }),
  expires_at: Type.String({ format: 'date-time' }),
});
export type LiveView = Static<typeof LiveView>;

/** One picture of the page for a live viewer. */
export interface LiveFrame {
  mime: 'image/jpeg' | 'image/png';
  /** base64 */
  data: string;
}

export const NavigateRequest = Type.Object({
  url: Type.String({ minLength: 1, format: 'uri' }),
  timeout_ms: Type.Optional(
    Type.Integer({
      minimum: 100,
      maximum: 120000,
      description: "How long to wait for the page's load event (default 30000)",
    }),
  ),
});
export type NavigateOptions = { timeoutMs?: number };
export const NavigateResult = Type.Object({ session_id: Type.String(), url: Type.String(), title: Type.String() });
export type NavigateResult = Static<typeof NavigateResult>;

export const Screenshot = Type.Object({
  format: Type.Literal('png'),
  data: Type.String({ contentEncoding: 'base64' }),
});
export type Screenshot = Static<typeof Screenshot>;

export const PageContent = Type.Object({ content: Type.String() });
export type PageContent = Static<typeof PageContent>;

export const ClickRequest = Type.Object({ selector: Type.String({ minLength: 1 }) });
export const TypeRequest = Type.Object({ selector: Type.String({ minLength: 1 }), text: Type.String() });
export const EvaluateRequest = Type.Object({ expression: Type.String({ minLength: 1 }) });
export const EvaluateResult = Type.Object({ result: Type.Unknown() });
export type EvaluateResult = Static<typeof EvaluateResult>;

/** What click and type answer: the action happened on this session. */
export const ActionResult = Type.Object({ session_id: Type.String(), status: Type.Literal('ok') });
export type ActionResult = Static<typeof ActionResult>;

export interface BrowserCapabilities {
  /** Start, list, inspect and stop session records. */
  sessions: boolean;
  /** navigate, content, click, type: needs a real browser. */
  navigation: boolean;
  screenshots: boolean;
  /** evaluate JavaScript in the page. */
  evaluate: boolean;
  live_view: boolean;
  [k: string]: boolean | string | readonly string[];
}

/**
 * The browser primitive. The plugin resolves owner scoping (spec 4.3) from the
 * session record, so providers keep `owner_id` but never judge access.
 * Interaction methods throw when the session is unknown or the page action
 * fails; the plugin turns both into 400.
 */
export interface BrowserProvider extends ProviderBase {
  readonly kind: 'browser';
  readonly capabilities: BrowserCapabilities;
  startSession(ownerId: string, req: StartSessionRequest): Promise<BrowserSession>;
  getSession(sessionId: string): Promise<BrowserSession | undefined>;
  /** Every session, or only those of `ownerId` when given. */
  listSessions(ownerId?: string): Promise<BrowserSession[]>;
  stopSession(sessionId: string): Promise<boolean>;
  /**
   * Live view (capability `live_view`): calls `onFrame` with pictures of the session's page until the returned
   * function is called. The HTTP layer signs and serves the viewer; the provider only supplies frames.
   */
  watch(sessionId: string, onFrame: (frame: LiveFrame) => void): Promise<() => void>;
  navigate(sessionId: string, url: string, opts?: NavigateOptions): Promise<NavigateResult>;
  screenshot(sessionId: string, opts?: { fullPage?: boolean }): Promise<Screenshot>;
  content(sessionId: string): Promise<PageContent>;
  click(sessionId: string, selector: string): Promise<ActionResult>;
  typeText(sessionId: string, selector: string, text: string): Promise<ActionResult>;
  evaluate(sessionId: string, expression: string): Promise<EvaluateResult>;
}

/** Thrown by a provider when a page action fails (selector missing, navigation error). */
export class BrowserActionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BrowserActionError';
  }
}
