/**
 * One error type for the whole service. Every 4xx/5xx leaves the process as
 * JSON `{detail, code}`; `code` is stable (`SB_ERR_<AREA>_<WHAT>`) so clients
 * can branch on it while `detail` stays human-readable.
 */
export type ErrorDetail = string | Array<{ loc: Array<string | number>; msg: string; type: string }>;

export class SwitchboardError extends Error {
  readonly statusCode: number;
  readonly code: string;
  readonly detail: ErrorDetail;
  /** Extra response headers (e.g. WWW-Authenticate on 401). */
  readonly headers?: Record<string, string>;

  constructor(
    statusCode: number,
    code: string,
    detail: ErrorDetail,
    options?: { cause?: unknown; headers?: Record<string, string> },
  ) {
    super(typeof detail === 'string' ? detail : 'Validation error', { cause: options?.cause });
    this.name = 'SwitchboardError';
    this.statusCode = statusCode;
    this.code = code;
    this.detail = detail;
    this.headers = options?.headers;
  }
}

export function isSwitchboardError(err: unknown): err is SwitchboardError {
  return err instanceof SwitchboardError;
}

// Constructors for the statuses both specs use. Each takes the area-specific
// code so the code names where the error came from, not just its status.
export const badRequest = (code: string, detail: string, cause?: unknown) =>
  new SwitchboardError(400, code, detail, { cause });
export const unauthorized = (code: string, detail = 'Invalid or missing credentials') =>
  new SwitchboardError(401, code, detail, { headers: { 'www-authenticate': 'Bearer' } });
export const forbidden = (code: string, detail: string) => new SwitchboardError(403, code, detail);
export const notFound = (code: string, detail: string) => new SwitchboardError(404, code, detail);
export const conflict = (code: string, detail: string) => new SwitchboardError(409, code, detail);
export const unprocessable = (code: string, detail: ErrorDetail) => new SwitchboardError(422, code, detail);
/** `retryAfterSeconds` becomes the Retry-After header: when the caller may try again. */
export const tooManyRequests = (code: string, detail: string, retryAfterSeconds?: number) =>
  new SwitchboardError(
    429,
    code,
    detail,
    retryAfterSeconds === undefined
      ? undefined
      : { headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) } },
  );
export const notImplemented = (code: string, detail: string) => new SwitchboardError(501, code, detail);
export const badGateway = (code: string, detail: string, cause?: unknown) =>
  new SwitchboardError(502, code, detail, { cause });
export const unavailable = (code: string, detail: string, cause?: unknown) =>
  new SwitchboardError(503, code, detail, { cause });
export const gatewayTimeout = (code: string, detail: string, cause?: unknown) =>
  new SwitchboardError(504, code, detail, { cause });

/** Startup failures (bad config, broken provider package) that must stop the process with a clear message. */
export class StartupError extends Error {
  readonly code: string;
  constructor(code: string, message: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'StartupError';
    this.code = code;
  }
}
