import { randomUUID } from 'node:crypto';
import { notFound, SwitchboardError } from '../../../core/errors.ts';
import type { Fernet } from '../../../core/crypto/fernet.ts';
import type { Store } from '../../../core/store.ts';
import type { UserContext } from '../auth/context.ts';
import {
  applyCredential,
  backendHeaders,
  credentialChanged,
  decryptCredential,
  type CredentialAuditLog,
  type CredentialInput,
  type StoredCredential,
} from './credentials.ts';
import type { ServerRecord } from './records.ts';
import { IndexedCollection, type Change } from './repository.ts';
import { applyVerdict, reviewed, type ScanHook, type ScanVerdict } from './scan.ts';
import type { ServerFields } from './server-input.ts';

export interface RegisterOptions {
  overwrite?: boolean;
  /** Status for "already exists": 409 (programmatic, internal) or 400 (UI register, spec 7). */
  existsStatus?: 400 | 409;
  /** Endpoint name recorded in the credential audit. */
  via: string;
  /** A new version of a known server becomes the served one only when asked (set_as_default). */
  setAsDefault?: boolean;
}

export interface HealthUpdate {
  health_status: string;
  last_checked_iso: string;
  tools?: Array<{ name: string; description?: string; inputSchema?: Record<string, unknown> }>;
}

/**
 * Registered MCP servers: the single writer of server records. The health
 * checker and gateway use get/list/updateHealth/backendHeaders and listen to
 * onChange; routes use the rest.
 */
export class ServerRepository {
  readonly index: IndexedCollection<ServerRecord>;
  scanner?: () => ScanHook;
  lastScan = new Map<string, ScanVerdict>();

  constructor(
    store: Store,
    private readonly fernet: Fernet,
    private readonly audit: CredentialAuditLog,
  ) {
    this.index = new IndexedCollection<ServerRecord>(store, 'registry_servers', (s) => s.path);
  }

  load = () => this.index.load();
  sync = () => this.index.sync();
  get = (path: string) => this.index.get(path);
  list = () => this.index.list();
  onChange = (fn: (c: Change<ServerRecord>) => void) => this.index.onChange(fn);

  require(path: string): ServerRecord {
    const s = this.index.get(path);
    if (!s) throw notFound('SB_ERR_REGISTRY_SERVER_NOT_FOUND', `No server is registered at ${path}`);
    return s;
  }

  /** Backend headers with the credential decrypted in memory (never stored or returned). */
  backendHeaders(path: string): Record<string, string> {
    return backendHeaders(this.require(path), this.fernet);
  }

  decryptCredential(path: string): string | undefined {
    return decryptCredential(this.require(path), this.fernet);
  }

  async register(
    fields: ServerFields & { path: string; server_name: string; proxy_pass_url: string },
    cred: CredentialInput,
    user: UserContext,
    opts: RegisterOptions,
  ): Promise<{ record: ServerRecord; created: boolean; scan: ScanVerdict }> {
    return this.index.lock(fields.path, async () => {
      const existing = this.index.get(fields.path);
      const now = new Date().toISOString();
      const version = fields.version;
      if (existing && !opts.overwrite) {
        const dupVersion = version !== undefined && existing.versions.some((v) => v.version === version);
        if (dupVersion || version === undefined) {
          const what = dupVersion ? `with version ${version}` : '';
          const detail =
            `Service ${fields.path} already exists ${what}`.trim() +
            (version === undefined ? ' (send a new version, or update it with PUT)' : '');
          throw new SwitchboardError(
            dupVersion ? 409 : (opts.existsStatus ?? 409),
            'SB_ERR_REGISTRY_SERVER_EXISTS',
            detail,
          );
        }
      }
      if (existing && !opts.overwrite && version !== undefined && !opts.setAsDefault) {
        // Registering a new version (a beta beside a stable release) lists it without serving it:
        // endpoint, credential and fields stay those of the default version until set_as_default.
        const listed: ServerRecord = {
          ...existing,
          versions: [
            ...existing.versions,
            { version, status: fields.status ?? 'active', proxy_pass_url: fields.proxy_pass_url, registered_at: now },
          ],
          updated_at: now,
        };
        await this.index.set(listed.path, listed);
        return { record: listed, created: false, scan: this.lastScan.get(listed.path) ?? { blocked: false } };
      }
      // A new version or an overwrite that does not resend the credential keeps the stored one.
      const credential = applyCredential(cred, existing, this.fernet);
      const keepVersions = existing && !opts.overwrite ? existing.versions : [];
      const base: ServerRecord = {
        id: existing?.id ?? randomUUID(),
        description: '',
        tags: [],
        num_tools: 0,
        num_stars: 0,
        is_python: false,
        license: 'N/A',
        metadata: {},
        supported_transports: ['streamable-http'],
        status: 'active',
        is_enabled: true,
        health_status: 'unknown',
        last_checked_iso: null,
        tools: [],
        groups: existing?.groups ?? [],
        registered_by: existing?.registered_by ?? user.username,
        registered_at: existing?.registered_at ?? now,
        // A new version of a known server starts from the server as it is (tools, health, state).
        ...(existing && !opts.overwrite ? existing : {}),
        ...fields,
        ...credential,
        versions: [...keepVersions.filter((v) => v.version !== version)],
        updated_at: now,
      };
      if (credential.auth_scheme === 'none') {
        delete base.auth_credential_ciphertext;
        delete base.auth_header_name;
      }
      if (fields.tool_list_json) base.tools = fields.tool_list_json;
      base.versions.push({
        version: version ?? 'v1.0.0',
        status: base.status,
        proxy_pass_url: base.proxy_pass_url,
        registered_at: now,
      });
      if (base.version === undefined) base.version = version ?? 'v1.0.0';
      const verdict = await (this.scanner?.().server(base) ?? Promise.resolve({ blocked: false }));
      const record = applyVerdict(base, verdict);
      await this.index.set(record.path, record);
      this.lastScan.set(record.path, verdict);
      if (existing ? credentialChanged(existing, credential) : record.auth_scheme !== 'none') {
        await this.audit.record({
          username: user.username,
          path: record.path,
          auth_scheme: record.auth_scheme,
          auth_header_name: record.auth_header_name,
          via: opts.via,
          cleared: record.auth_scheme === 'none',
        });
      }
      return { record, created: !existing, scan: verdict };
    });
  }

  /** Make a listed version the served one: its endpoint and status become the server's. */
  async setDefaultVersion(path: string, version: string): Promise<ServerRecord | undefined> {
    return this.index.lock(path, async () => {
      const existing = this.require(path);
      const v = existing.versions.find((x) => x.version === version);
      if (!v) return undefined;
      const record: ServerRecord = {
        ...existing,
        version: v.version,
        proxy_pass_url: v.proxy_pass_url,
        status: v.status,
        updated_at: new Date().toISOString(),
      };
      await this.index.set(path, record);
      return record;
    });
  }

  /** A version listed beside the default one, not served until made default. */
  async addVersion(
    path: string,
    entry: { version: string; status: ServerRecord['status']; proxy_pass_url: string },
  ): Promise<ServerRecord> {
    return this.index.lock(path, async () => {
      const existing = this.require(path);
      const now = new Date().toISOString();
      const record: ServerRecord = {
        ...existing,
        versions: [...existing.versions, { ...entry, registered_at: now }],
        updated_at: now,
      };
      await this.index.set(path, record);
      return record;
    });
  }

  /** Descriptive fields and, when given, the credential. The path never changes. */
  async update(
    path: string,
    fields: ServerFields,
    cred: CredentialInput | undefined,
    user: UserContext,
    via: string,
  ): Promise<ServerRecord> {
    return this.index.lock(path, async () => {
      const existing = this.require(path);
      const credential: StoredCredential | undefined = cred ? applyCredential(cred, existing, this.fernet) : undefined;
      const { path: _ignored, ...rest } = fields;
      const record: ServerRecord = {
        ...existing,
        ...rest,
        ...(credential ?? {}),
        updated_at: new Date().toISOString(),
      };
      if (fields.version && !existing.versions.some((v) => v.version === fields.version)) {
        record.versions = [
          ...existing.versions,
          {
            version: fields.version,
            status: record.status,
            proxy_pass_url: record.proxy_pass_url,
            registered_at: record.updated_at,
          },
        ];
      }
      if (fields.tool_list_json) record.tools = fields.tool_list_json;
      await this.index.set(path, record);
      if (credential && credentialChanged(existing, credential)) {
        await this.audit.record({
          username: user.username,
          path,
          auth_scheme: credential.auth_scheme,
          auth_header_name: credential.auth_header_name,
          via,
          cleared: credential.auth_scheme === 'none',
        });
      }
      return record;
    });
  }

  async setCredential(path: string, cred: CredentialInput, user: UserContext, via: string): Promise<ServerRecord> {
    return this.index.lock(path, async () => {
      const existing = this.require(path);
      const credential = applyCredential(cred, existing, this.fernet, true);
      const record: ServerRecord = { ...existing, ...credential, updated_at: new Date().toISOString() };
      if (credential.auth_scheme === 'none') {
        delete record.auth_credential_ciphertext;
        delete record.auth_header_name;
      }
      await this.index.set(path, record);
      await this.audit.record({
        username: user.username,
        path,
        auth_scheme: credential.auth_scheme,
        auth_header_name: credential.auth_header_name,
        via,
        cleared: credential.auth_scheme === 'none',
      });
      return record;
    });
  }

  async setEnabled(path: string, enabled: boolean): Promise<ServerRecord> {
    return this.index.lock(path, async () => {
      const existing = this.require(path);
      // Every server toggle needs toggle_service (or internal admin): enabling is the review that lifts a scan's block.
      const record = reviewed({ ...existing, is_enabled: enabled, updated_at: new Date().toISOString() });
      await this.index.set(path, record);
      return record;
    });
  }

  /** For the health checker: health fields and discovered tools, stored with the server. */
  async updateHealth(path: string, h: HealthUpdate): Promise<ServerRecord | undefined> {
    return this.index.lock(path, async () => {
      const existing = this.index.get(path);
      if (!existing) return undefined;
      const record: ServerRecord = {
        ...existing,
        health_status: h.health_status,
        last_checked_iso: h.last_checked_iso,
      };
      if (h.tools) {
        record.tools = h.tools.map((t) => ({
          name: t.name,
          description: t.description ?? '',
          inputSchema: t.inputSchema ?? {},
        }));
        record.num_tools = record.tools.length;
      }
      await this.index.set(path, record);
      return record;
    });
  }

  /** Any other field change (e.g. a rescan's tags); credentials go through setCredential only. */
  async patch(path: string, fn: (r: ServerRecord) => ServerRecord): Promise<ServerRecord> {
    return this.index.lock(path, async () => {
      const existing = this.require(path);
      const next = fn(structuredClone(existing));
      next.auth_credential_ciphertext = existing.auth_credential_ciphertext;
      next.auth_scheme = existing.auth_scheme;
      next.auth_header_name = existing.auth_header_name;
      await this.index.set(path, next);
      return next;
    });
  }

  async delete(path: string): Promise<void> {
    return this.index.lock(path, async () => {
      this.require(path);
      await this.index.delete(path);
    });
  }

  async setGroups(path: string, add: string[], remove: string[]): Promise<ServerRecord> {
    return this.patch(path, (r) => ({
      ...r,
      groups: [...new Set([...r.groups, ...add])].filter((g) => !remove.includes(g)),
    }));
  }

  /** A server found by path, or by display name (the groups endpoints take `server_name`). */
  findByName(name: string): ServerRecord | undefined {
    const asPath = name.startsWith('/') ? name.replace(/\/+$/, '') : `/${name.replace(/^\/+|\/+$/g, '')}`;
    return this.index.get(asPath) ?? this.index.list().find((s) => s.server_name === name);
  }
}
