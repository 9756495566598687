import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { badRequest, SwitchboardError } from '../../../core/errors.ts';
import { FernetError, type Fernet } from '../../../core/crypto/fernet.ts';
import type { Collection } from '../../../core/store.ts';
import { AUTH_SCHEMES, type AuthScheme, type CredentialAudit, type ServerRecord } from './records.ts';

/** Backend credentials (spec 5.3): validation, encryption at rest, audit, and in-memory decryption for the health checker and gateway. */

export const DEFAULT_HEADER: Record<AuthScheme, string | undefined> = {
  none: undefined,
  bearer: 'Authorization',
  api_key: 'X-API-Key',
};

export interface CredentialInput {
  auth_scheme?: unknown;
  auth_credential?: unknown;
  auth_header_name?: unknown;
}

export type StoredCredential = Pick<
  ServerRecord,
  'auth_scheme' | 'auth_header_name' | 'auth_credential_ciphertext' | 'auth_credential_encrypted'
>;

/** Did the request try to set anything credential-related? */
export function touchesCredential(input: CredentialInput): boolean {
  return [input.auth_scheme, input.auth_credential, input.auth_header_name].some((v) => v !== undefined && v !== '');
}

function text(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  const s = String(v).trim();
  return s === '' ? undefined : s;
}

/**
 * The stored credential after applying `input` to `existing`. A scheme other
 * than none needs a credential, unless the same scheme already has one stored
 * (an edit that does not resend the secret keeps it).
 */
export function applyCredential(
  input: CredentialInput,
  existing: StoredCredential | undefined,
  fernet: Fernet,
  requireScheme = false,
): StoredCredential {
  const rawScheme = text(input.auth_scheme);
  if (rawScheme === undefined && requireScheme)
    throw badRequest('SB_ERR_REGISTRY_AUTH_SCHEME', `auth_scheme is required: one of ${AUTH_SCHEMES.join(', ')}`);
  const scheme = (
    rawScheme ??
    (text(input.auth_credential) ? undefined : existing?.auth_scheme) ??
    'none'
  ).toLowerCase();
  if (!AUTH_SCHEMES.includes(scheme as AuthScheme)) {
    throw badRequest(
      'SB_ERR_REGISTRY_AUTH_SCHEME',
      `Invalid auth_scheme '${rawScheme}': use one of ${AUTH_SCHEMES.join(', ')}`,
    );
  }
  const s = scheme as AuthScheme;
  const credential = text(input.auth_credential);
  const header = text(input.auth_header_name);
  if (header !== undefined && !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(header)) {
    throw badRequest('SB_ERR_REGISTRY_AUTH_HEADER', `auth_header_name '${header}' is not a valid HTTP header name`);
  }
  if (s === 'none') {
    if (credential)
      throw badRequest(
        'SB_ERR_REGISTRY_CREDENTIAL_UNEXPECTED',
        "auth_credential was given but auth_scheme is 'none': send auth_scheme bearer or api_key",
      );
    return { auth_scheme: 'none', auth_credential_encrypted: false };
  }
  const keep = !credential && existing?.auth_scheme === s && existing.auth_credential_ciphertext;
  if (!credential && !keep) {
    throw badRequest('SB_ERR_REGISTRY_CREDENTIAL_REQUIRED', `auth_credential is required when auth_scheme is '${s}'`);
  }
  return {
    auth_scheme: s,
    auth_header_name: header ?? (keep ? existing?.auth_header_name : undefined) ?? DEFAULT_HEADER[s],
    auth_credential_ciphertext: credential ? fernet.encrypt(credential) : existing!.auth_credential_ciphertext,
    auth_credential_encrypted: true,
  };
}

export function credentialChanged(a: StoredCredential | undefined, b: StoredCredential): boolean {
  return (
    !a ||
    a.auth_scheme !== b.auth_scheme ||
    a.auth_header_name !== b.auth_header_name ||
    a.auth_credential_ciphertext !== b.auth_credential_ciphertext
  );
}

/** The plaintext credential, in memory only (health checks, tool discovery, the gateway). */
export function decryptCredential(server: StoredCredential & { path?: string }, fernet: Fernet): string | undefined {
  if (server.auth_scheme === 'none' || !server.auth_credential_ciphertext) return undefined;
  try {
    return fernet.decryptString(server.auth_credential_ciphertext);
  } catch (err) {
    const why = err instanceof FernetError ? err.message : 'decryption failed';
    throw new SwitchboardError(
      500,
      'SB_ERR_REGISTRY_CREDENTIAL_UNREADABLE',
      `The stored credential of ${server.path ?? 'this server'} cannot be decrypted (${why}); was ENCRYPTION_KEY changed? Set the credential again.`,
    );
  }
}

/** Headers to send to the backend (spec 5.3), plus the server's custom headers. */
export function backendHeaders(server: ServerRecord, fernet: Fernet): Record<string, string> {
  const headers: Record<string, string> = { ...(server.headers ?? {}) };
  const secret = decryptCredential(server, fernet);
  if (secret === undefined) return headers;
  if (server.auth_scheme === 'bearer') headers[server.auth_header_name ?? 'Authorization'] = `Bearer ${secret}`;
  else headers[server.auth_header_name ?? 'X-API-Key'] = secret;
  return headers;
}

/** Every credential change, kept in the `registry_credential_audit` collection and logged; never the credential itself. */
export class CredentialAuditLog {
  constructor(
    private readonly col: Collection<CredentialAudit>,
    private readonly log: FastifyBaseLogger,
  ) {}

  async record(entry: Omit<CredentialAudit, 'at' | 'action'> & { cleared?: boolean }): Promise<CredentialAudit> {
    const at = new Date().toISOString();
    const { cleared, ...rest } = entry;
    const record: CredentialAudit = { at, action: cleared ? 'cleared' : 'set', ...rest };
    // Time-ordered keys keep the audit readable in key order.
    await this.col.set(`${at}_${randomUUID()}`, record);
    this.log.info({ audit: 'backend_credential', ...record }, 'backend credential changed');
    return record;
  }

  async list(path?: string): Promise<CredentialAudit[]> {
    const out: CredentialAudit[] = [];
    for await (const [, v] of this.col.entries()) if (!path || v.path === path) out.push(v);
    return out.sort((a, b) => a.at.localeCompare(b.at));
  }
}
