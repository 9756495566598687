import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.ts';
import type { DiscoveredPackage } from './discovery.ts';
import { badRequest, forbidden, StartupError } from './errors.ts';
import { PRIMITIVES, PROVIDER_KINDS, providerHeader, type PrimitiveName, type ProviderKind } from './primitives.ts';
import type { CallerCredentials, Health, ProviderBase, ProviderContext, ProviderFactory } from './provider.ts';
import type { Store } from './store.ts';
import type { LateServices } from './registry-link.ts';

/** Records the duration (seconds) of one call. */
export type CallRecorder = (seconds: number) => void;
/**
 * Gives the recorder for one (kind, provider, method, outcome). It is asked
 * once per wrapped method and kept, so a call costs no label lookup.
 */
export type CallObserver = (
  kind: ProviderKind,
  provider: string,
  method: string,
  outcome: 'ok' | 'error',
) => CallRecorder;

type Headers = Record<string, string | string[] | undefined>;

/** `X-Provider-{Primitive}` header names, made once rather than per request. */
const HEADER_OF = new Map<PrimitiveName, string>(PRIMITIVES.map((p) => [p, providerHeader(p)]));

const pick = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)?.trim() || undefined;

/** The per-primitive fallback when the config names no default. */
const BUILTIN_DEFAULTS: Partial<Record<ProviderKind, string>> = { memory: 'in_memory', auth: 'noop' };

/**
 * Every provider instance of the process, by kind and instance name, plus the
 * routing rule that picks one per request.
 */
export class ProviderSet {
  private readonly byKind = new Map<ProviderKind, Map<string, ProviderBase>>();
  private readonly defaults = new Map<ProviderKind, string>();
  private readonly locked = new Set<ProviderKind>();
  private observer?: CallObserver;

  /** Record every provider method call (metrics); set once by the ops plugin. */
  observe(fn: CallObserver): void {
    this.observer = fn;
  }

  add(instance: ProviderBase): void {
    let m = this.byKind.get(instance.kind);
    if (!m) this.byKind.set(instance.kind, (m = new Map()));
    m.set(instance.name, this.instrument(instance));
  }

  setDefault(kind: ProviderKind, name: string): void {
    this.defaults.set(kind, name);
  }

  lock(kind: ProviderKind): void {
    this.locked.add(kind);
  }

  isLocked(kind: ProviderKind): boolean {
    return this.locked.has(kind);
  }

  names(kind: ProviderKind): string[] {
    return [...(this.byKind.get(kind)?.keys() ?? [])];
  }

  defaultName(kind: ProviderKind): string | undefined {
    return this.defaults.get(kind);
  }

  /** A named instance, or the default. Undefined when the kind has none. */
  get<P extends ProviderBase = ProviderBase>(kind: ProviderKind, name?: string): P | undefined {
    const n = name ?? this.defaults.get(kind);
    return n === undefined ? undefined : (this.byKind.get(kind)?.get(n) as P | undefined);
  }

  private unknown(kind: ProviderKind, name: string) {
    const label = kind === 'llm' ? 'LLM' : kind.replace(/_/g, ' ');
    return badRequest(
      'SB_ERR_PROVIDER_UNKNOWN',
      `Unknown ${label} provider '${name}'. Available: ${this.names(kind).join(', ') || '(none)'}`,
    );
  }

  /**
   * Routing: X-Provider-{Primitive} > X-Provider > agent provider_overrides > config default.
   * A header or override on a locked primitive is refused, never ignored.
   */
  resolve<P extends ProviderBase = ProviderBase>(
    primitive: PrimitiveName,
    headers: Headers,
    agentOverride?: string,
  ): P {
    const header = HEADER_OF.get(primitive) ?? providerHeader(primitive);
    const specific = pick(headers[header]);
    const general = specific === undefined ? pick(headers['x-provider']) : undefined;
    const instances = this.byKind.get(primitive);
    let requested = specific ?? agentOverride;
    let source: 'specific' | 'general' | 'agent' = specific !== undefined ? 'specific' : 'agent';
    // X-Provider applies to every primitive, but only where that name exists.
    if (general !== undefined && instances?.has(general)) {
      requested = general;
      source = 'general';
    }
    const def = this.defaults.get(primitive);
    if (requested !== undefined && requested !== def && this.locked.has(primitive)) {
      const by =
        source === 'specific'
          ? `header ${header.replace(/(^|-)([a-z])/g, (_m, d: string, c: string) => d + c.toUpperCase())}`
          : source === 'general'
            ? 'header X-Provider'
            : 'agent provider_overrides';
      throw forbidden(
        'SB_ERR_PROVIDER_LOCKED',
        `The ${primitive} provider is locked to '${def}' by the operator; the ${by} asking for '${requested}' is refused`,
      );
    }
    const name = requested ?? def;
    if (name === undefined) throw this.unknown(primitive, '(none configured)');
    const p = instances?.get(name);
    if (!p) throw this.unknown(primitive, name);
    return p as P;
  }

  listing(): Record<string, { default: string | null; available: string[] }> {
    return Object.fromEntries(
      PRIMITIVES.map((p) => [p, { default: this.defaults.get(p) ?? null, available: this.names(p) }]),
    );
  }

  all(): ProviderBase[] {
    return [...this.byKind.values()].flatMap((m) => [...m.values()]);
  }

  /** `primitive/provider` -> health, probed in parallel; a probe that throws is `down`. */
  async health(creds?: CallerCredentials, timeoutMs = 5000): Promise<Record<string, Health>> {
    const entries = await Promise.all(
      this.all().map(async (p): Promise<[string, Health]> => {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<Health>((res) => (timer = setTimeout(() => res('down'), timeoutMs)));
        try {
          return [`${p.kind}/${p.name}`, await Promise.race([p.healthcheck(creds), timeout])];
        } catch {
          return [`${p.kind}/${p.name}`, 'down'];
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    return Object.fromEntries(entries.sort(([a], [b]) => a.localeCompare(b)));
  }

  async closeAll(): Promise<void> {
    await Promise.allSettled(this.all().map((p) => p.close()));
  }

  /**
   * Wrap provider methods so every call is counted by kind, provider and
   * outcome. The result is a facade made once per instance: its prototype is
   * the instance, so plain properties (name, capabilities, ...) read through
   * live, and it owns one wrapper per method found at registration, each
   * calling the method on the instance itself (so `this` inside a provider is
   * always the provider). A Proxy did the same with a trap on every property
   * read, which was a visible share of a fast provider call.
   */
  private instrument<P extends ProviderBase>(instance: P): P {
    type Fn = (...a: unknown[]) => unknown;
    const counted = (prop: string, value: Fn): Fn => {
      // The observer the recorders came from; re-asked if the ops plugin sets another.
      let from: CallObserver | undefined;
      let ok: CallRecorder | undefined;
      let error: CallRecorder | undefined;
      // A series appears on its first call with that outcome, as before: no zero-valued error series.
      const record = (observer: CallObserver, outcome: 'ok' | 'error', seconds: number) => {
        if (from !== observer) {
          from = observer;
          ok = error = undefined;
        }
        const rec =
          outcome === 'ok'
            ? (ok ??= observer(instance.kind, instance.name, prop, 'ok'))
            : (error ??= observer(instance.kind, instance.name, prop, 'error'));
        rec(seconds);
      };
      return (...args: unknown[]) => {
        const observer = this.observer;
        if (!observer) return value.apply(instance, args);
        const start = performance.now();
        let out: unknown;
        try {
          out = value.apply(instance, args);
        } catch (e) {
          record(observer, 'error', (performance.now() - start) / 1000);
          throw e;
        }
        if (out && typeof (out as Promise<unknown>).then === 'function') {
          return (out as Promise<unknown>).then(
            (v) => {
              record(observer, 'ok', (performance.now() - start) / 1000);
              return v;
            },
            (e) => {
              record(observer, 'error', (performance.now() - start) / 1000);
              throw e;
            },
          );
        }
        record(observer, 'ok', (performance.now() - start) / 1000);
        return out;
      };
    };
    const facade = Object.create(instance) as P;
    const seen = new Set<string>(['constructor']);
    for (let o: object | null = instance; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
      for (const prop of Object.getOwnPropertyNames(o)) {
        if (seen.has(prop)) continue;
        seen.add(prop);
        const value = Object.getOwnPropertyDescriptor(o, prop)?.value as unknown;
        if (typeof value !== 'function') continue; // data and accessors stay on the instance
        const fn = value as Fn;
        // Probes and shutdown are not provider calls to count, but they run on the instance too.
        const wrapped =
          prop === 'healthcheck' || prop === 'close'
            ? (...args: unknown[]) => fn.apply(instance, args)
            : counted(prop, fn);
        Object.defineProperty(facade, prop, { value: wrapped, writable: true, configurable: true, enumerable: true });
      }
    }
    return facade;
  }
}

export interface BuildProvidersOptions {
  packages: DiscoveredPackage[];
  config: Config;
  store: Store;
  logger: FastifyBaseLogger;
  dataDir: string;
  /** Late-bound services shared with the surface plugins (see core/registry-link.ts). */
  services?: LateServices;
  surfaces?: readonly string[];
}

/**
 * Instantiate providers from the config. Where the config lists no instances for
 * a kind, every discovered factory marked `autoInstance` gets one instance named
 * after its type, so a process with no config at all has a provider everywhere.
 */
export async function buildProviders(opts: BuildProvidersOptions): Promise<ProviderSet> {
  const set = new ProviderSet();
  const factories = new Map<ProviderKind, Map<string, { factory: ProviderFactory; pkg: string }>>();
  for (const pkg of opts.packages) {
    for (const f of pkg.factories) {
      let m = factories.get(f.kind);
      if (!m) factories.set(f.kind, (m = new Map()));
      const prev = m.get(f.type);
      if (prev)
        throw new StartupError(
          'SB_ERR_PROVIDER_DUPLICATE',
          `Provider type '${f.kind}/${f.type}' is declared by both '${prev.pkg}' and '${pkg.name}'`,
        );
      m.set(f.type, { factory: f, pkg: pkg.name });
    }
  }
  const ctx: ProviderContext = {
    store: opts.store,
    logger: opts.logger,
    dataDir: opts.dataDir,
    lookup: (kind, name) => set.get(kind, name),
    services: opts.services ?? {},
    surfaces: opts.surfaces,
  };
  for (const kind of PROVIDER_KINDS) {
    const kc = opts.config.providers?.[kind];
    const available = factories.get(kind) ?? new Map();
    let preferred: string | undefined;
    const wanted: Array<[string, string, Record<string, unknown>]> = [];
    if (kc?.instances) {
      for (const [name, inst] of Object.entries(kc.instances)) wanted.push([name, inst.type, inst.options ?? {}]);
    } else {
      for (const { factory } of available.values()) {
        if (!factory.autoInstance) continue;
        if (factory.enginePresent) {
          if (!(await factory.enginePresent(ctx))) continue;
          preferred ??= factory.type;
        }
        wanted.push([factory.type, factory.type, {}]);
      }
    }
    for (const [name, type, options] of wanted) {
      const entry = available.get(type);
      if (!entry) {
        throw new StartupError(
          'SB_ERR_CONFIG_INVALID',
          `Invalid config key 'providers.${kind}.instances.${name}.type': no ${kind} provider of type '${type}' was discovered (known: ${[...available.keys()].join(', ') || 'none'})`,
        );
      }
      let instance: ProviderBase;
      try {
        instance = await entry.factory.create(name, options, ctx);
      } catch (err) {
        if (err instanceof StartupError) throw err;
        throw new StartupError(
          'SB_ERR_PROVIDER_INIT_FAILED',
          `Provider '${kind}/${name}' (package '${entry.pkg}') failed to start: ${(err as Error).message}`,
          err,
        );
      }
      set.add(instance);
      // A configured instance whose engine is set up (an OIDC issuer, say) is preferred over noop too.
      if (kc?.instances && preferred === undefined && entry.factory.preferred?.(options, ctx)) preferred = name;
    }
    const builtin = BUILTIN_DEFAULTS[kind] ?? 'noop';
    const def = kc?.default ?? preferred ?? (set.names(kind).includes(builtin) ? builtin : set.names(kind)[0]);
    if (def !== undefined) {
      if (!set.names(kind).includes(def)) {
        throw new StartupError(
          'SB_ERR_CONFIG_INVALID',
          `Invalid config key 'providers.${kind}.default': '${def}' is not one of ${set.names(kind).join(', ') || '(none)'}`,
        );
      }
      set.setDefault(kind, def);
    }
    if (kc?.locked) set.lock(kind);
  }
  return set;
}
