import { Type, type Static } from '@sinclair/typebox';
import type { ProviderBase } from '../provider.ts';

const SessionId = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.:-]+$' });

export const CodeSession = Type.Object({
  session_id: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('stopped')]),
  language: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
});
export type CodeSession = Static<typeof CodeSession>;

export const CreateCodeSessionRequest = Type.Object({
  session_id: Type.Optional(SessionId),
  language: Type.String({ minLength: 1, default: 'python' }),
});
export type CreateCodeSessionRequest = Static<typeof CreateCodeSessionRequest>;

export const ExecuteRequest = Type.Object({
  code: Type.String({ minLength: 1 }),
  /** Defaults to the session's language. */
  language: Type.Optional(Type.String({ minLength: 1 })),
  timeout_seconds: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 86400,
      description: "Wall time before the run is killed (provider default, e.g. 30; at most the provider's max)",
    }),
  ),
});
export type ExecuteRequest = Static<typeof ExecuteRequest>;

export const ExecuteResult = Type.Object({
  session_id: Type.String(),
  stdout: Type.String(),
  stderr: Type.String(),
  exit_code: Type.Integer(),
  result: Type.Unknown(),
  error: Type.Union([Type.String(), Type.Null()]),
  duration_ms: Type.Optional(Type.Integer()),
  /** Files of the session folder that the run created or changed. */
  files_created: Type.Optional(Type.Array(Type.String())),
  /** stdout or stderr went over the provider's cap and was cut. */
  truncated: Type.Optional(Type.Boolean()),
});
export type ExecuteResult = Static<typeof ExecuteResult>;

export const HistoryEntry = Type.Object({
  code: Type.String(),
  language: Type.String(),
  stdout: Type.String(),
  stderr: Type.String(),
  exit_code: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()]),
  executed_at: Type.String({ format: 'date-time' }),
});
export type HistoryEntry = Static<typeof HistoryEntry>;

export const History = Type.Object({ session_id: Type.String(), entries: Type.Array(HistoryEntry) });

export const FileInfo = Type.Object({ filename: Type.String(), size: Type.Integer() });
export type FileInfo = Static<typeof FileInfo>;

/** File names stay flat inside the session: no separators, no dot-dot. */
export const FILENAME_PATTERN = '^(?!\\.{1,2}$)[A-Za-z0-9_. -]{1,255}$';

export interface CodeInterpreterCapabilities {
  sessions: boolean;
  /** Languages `execute` accepts; empty means execution answers 501. */
  languages: readonly string[];
  /** Upload and download of session files. */
  files: boolean;
  [k: string]: boolean | string | readonly string[];
}

/** The code interpreter primitive. Sessions are addressed by id; unknown ids resolve to undefined/false. */
export interface CodeInterpreterProvider extends ProviderBase {
  readonly kind: 'code_interpreter';
  readonly capabilities: CodeInterpreterCapabilities;
  createSession(req: CreateCodeSessionRequest): Promise<CodeSession>;
  listSessions(): Promise<CodeSession[]>;
  getSession(sessionId: string): Promise<CodeSession | undefined>;
  deleteSession(sessionId: string): Promise<boolean>;
  execute(
    sessionId: string,
    code: string,
    language: string,
    opts?: { timeoutSeconds?: number },
  ): Promise<ExecuteResult>;
  history(sessionId: string, limit: number): Promise<HistoryEntry[]>;
  uploadFile(sessionId: string, filename: string, data: Buffer): Promise<FileInfo>;
  downloadFile(sessionId: string, filename: string): Promise<Buffer | undefined>;
}
