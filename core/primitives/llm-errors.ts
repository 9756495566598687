import { SwitchboardError } from '../errors.ts';

/**
 * An upstream LLM failure as the status a caller can act on, with a detail
 * that names the provider. Works on the errors of both official SDKs, which
 * share their class names and carry `status` for HTTP answers.
 */
export function llmUpstreamError(provider: string, err: unknown): SwitchboardError {
  if (err instanceof SwitchboardError) return err;
  const e = err as { status?: unknown; message?: string; constructor?: { name?: string }; name?: string };
  const kind = e?.constructor?.name ?? e?.name ?? '';
  const msg = (e?.message ?? String(err)).slice(0, 300);
  const status = typeof e?.status === 'number' ? e.status : undefined;
  if (kind === 'APIUserAbortError' || kind === 'AbortError')
    return new SwitchboardError(499, 'SB_ERR_LLM_ABORTED', `The request to LLM provider '${provider}' was cancelled`, {
      cause: err,
    });
  if (kind === 'APIConnectionTimeoutError')
    return new SwitchboardError(504, 'SB_ERR_LLM_TIMEOUT', `LLM provider '${provider}' did not answer in time`, {
      cause: err,
    });
  if (kind === 'APIConnectionError' || status === undefined)
    return new SwitchboardError(503, 'SB_ERR_LLM_UNREACHABLE', `LLM provider '${provider}' is unreachable: ${msg}`, {
      cause: err,
    });
  if (status === 429)
    return new SwitchboardError(429, 'SB_ERR_LLM_RATE_LIMITED', `LLM provider '${provider}' is rate limiting: ${msg}`, {
      cause: err,
    });
  if (status === 401 || status === 403)
    return new SwitchboardError(
      502,
      'SB_ERR_LLM_CREDENTIALS',
      `LLM provider '${provider}' refused the configured credentials (${status})`,
      { cause: err },
    );
  if (status === 503 || status === 529)
    return new SwitchboardError(
      503,
      'SB_ERR_LLM_OVERLOADED',
      `LLM provider '${provider}' is overloaded (${status}): ${msg}`,
      { cause: err },
    );
  if (status >= 500)
    return new SwitchboardError(502, 'SB_ERR_LLM_UPSTREAM', `LLM provider '${provider}' failed (${status}): ${msg}`, {
      cause: err,
    });
  if (status === 408)
    return new SwitchboardError(504, 'SB_ERR_LLM_TIMEOUT', `LLM provider '${provider}' timed out (408)`, {
      cause: err,
    });
  return new SwitchboardError(
    400,
    'SB_ERR_LLM_REJECTED',
    `LLM provider '${provider}' rejected the request (${status}): ${msg}`,
    { cause: err },
  );
}
