import type { FastifyRequest } from 'fastify';
import { badRequest, notFound } from '../../../core/errors.ts';
import type { CodeInterpreterProvider, CodeSession } from '../../../core/primitives/code-interpreter.ts';
import { requireCapability } from '../capability.ts';
import { ownership } from '../ownership.ts';

/**
 * The session if it exists (404) and the caller may use it (403): sessions are
 * private to their creator and admins (plugins/platform/ownership.ts). `change`
 * is for stopping it, the same rule today but kept apart should sessions gain sharing.
 */
export async function existingSession(
  request: FastifyRequest,
  p: CodeInterpreterProvider,
  sessionId: string,
  change = false,
): Promise<CodeSession> {
  const s = await p.getSession(sessionId);
  if (!s) throw notFound('SB_ERR_CODE_SESSION_NOT_FOUND', `Code interpreter session '${sessionId}' not found`);
  const { ledger, who } = ownership(request);
  if (change) await ledger.assertChange('code_session', p.name, sessionId, who);
  else await ledger.assertRead('code_session', p.name, sessionId, who);
  return s;
}

/**
 * A provider that runs no language at all lacks the capability (501); one that
 * runs others was asked for the wrong language, which the caller can fix (400).
 */
export function requireLanguage(p: CodeInterpreterProvider, language: string): void {
  requireCapability(p, 'languages', `executing ${language} code`, (v) => Array.isArray(v) && v.length > 0);
  if (!p.capabilities.languages.includes(language)) {
    throw badRequest(
      'SB_ERR_CODE_LANGUAGE_UNSUPPORTED',
      `Language '${language}' is not supported by the code interpreter provider '${p.name}'; supported: ${p.capabilities.languages.join(', ')}`,
    );
  }
}
