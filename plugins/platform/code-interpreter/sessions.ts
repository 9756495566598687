import { badRequest, notFound } from '../../../core/errors.ts';
import type { CodeInterpreterProvider, CodeSession } from '../../../core/primitives/code-interpreter.ts';
import { requireCapability } from '../capability.ts';

export async function existingSession(p: CodeInterpreterProvider, sessionId: string): Promise<CodeSession> {
  const s = await p.getSession(sessionId);
  if (!s) throw notFound('SB_ERR_CODE_SESSION_NOT_FOUND', `Code interpreter session '${sessionId}' not found`);
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
