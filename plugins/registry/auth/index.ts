import fp from 'fastify-plugin';
import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { forbidden } from '../../../core/errors.ts';
import { Authenticator, type Identified } from './identify.ts';
import { buildIdpVerifier } from './idp.ts';
import { loadAdminCredentials, loadSecretKey } from './keys.ts';
import { boundRequestRefusal, isPublicPath } from './resource-binding.ts';
import { ScopeStore, readScopeFiles } from './scope-store.ts';
import { attachCsrfCheck } from './csrf.ts';
import { LoginLockout, basicUsername, clientAddress } from './login-lockout.ts';
import { authSettings } from './settings.ts';
import loginRoutes from './routes/login.ts';
import tokenRoutes from './routes/tokens.ts';
import type { RegistryAuth } from './registry-auth.ts';
import scopeRoutes from './routes/scopes.ts';
import groupRoutes from './routes/groups.ts';
import validateRoutes from './routes/validate.ts';

export type { RegistryAuth };

const byContext = new WeakMap<object, RegistryAuth>();

/**
 * The registry auth of an app, from any encapsulation level (the root
 * instance in tests, a sibling plugin): keyed by the shared `app.sb` object.
 */
export function registryAuthOf(app: FastifyInstance): RegistryAuth {
  const ra = byContext.get(app.sb);
  if (!ra) throw new Error('registry auth is not registered on this app');
  return ra;
}

declare module 'fastify' {
  interface FastifyInstance {
    registryAuth: RegistryAuth;
  }
}

/**
 * Registry identity. fp-wrapped so its hooks cover the catalog's routes too:
 * onRequest sets request.user from HTTP Basic (the local admin), a bearer token
 * (self-signed HS256 or the IdP's RS256) or the session cookie; preValidation
 * enforces CSRF on unsafe requests authenticated by the cookie.
 */
async function registryAuth(app: FastifyInstance): Promise<void> {
  const { settings: sb } = app.sb;
  const settings = authSettings(sb.config.registry, process.env, sb.configDir);
  const secret = loadSecretKey(sb.dataDir, process.env, settings.secret_key);
  const admin = loadAdminCredentials(sb.dataDir, process.env, settings);
  if (admin.generated)
    app.log.warn(
      { file: admin.source, username: admin.username },
      'Generated a password for the registry admin; it is in this file (mode 0600)',
    );
  else app.log.info({ source: admin.source, username: admin.username }, 'Registry admin credentials loaded');
  app.log.info({ source: secret.source }, 'SECRET_KEY loaded');

  const scopes = new ScopeStore(app.sb.store);
  const scopeFiles = readScopeFiles(settings.scopesDir);
  // Seeded again whenever the store is found emptied (core/store-seeds.ts).
  await app.sb.seeds.add('registry scopes', () => scopes.seed(scopeFiles));
  const idp = settings.idp ? buildIdpVerifier(settings.idp) : undefined;
  const authenticator = new Authenticator(secret.key, admin, scopes, idp, app.sb.store, () => app.sb.seeds.epoch());
  const lockout = new LoginLockout(app.sb.store, settings.login_lockout);
  const shared: RegistryAuth = { settings, authenticator, scopes, idp, lockout };
  byContext.set(app.sb, shared);
  app.decorate('registryAuth', shared);

  // Form posts (login, the catalog's UI forms); the catalog must not register it again.
  if (!app.hasContentTypeParser('application/x-www-form-urlencoded')) await app.register(formbody);

  const apply = (request: FastifyRequest, who: Identified): void => {
    const bound = who.user?.resource;
    if (bound) {
      const path = request.url.split('?')[0];
      // Public endpoints ignore a bound token (the request goes on as anonymous); see isPublicPath.
      if (isPublicPath(path)) return;
      // /validate judges the original request, not itself.
      const refusal = path === '/validate' ? undefined : boundRequestRefusal(bound, path);
      if (refusal) throw forbidden('SB_ERR_TOKEN_RESOURCE_BOUND', refusal);
    }
    request.authSource = who.source;
    if (who.user) request.user = who.user;
    if (who.failure) request.authFailure = who.failure;
    if (who.session) request.session = who.session;
  };

  // HTTP Basic is a password check on every request, so it counts toward the login lockout like the form.
  const identify = async (request: FastifyRequest): Promise<Identified> => {
    const basicUser = basicUsername(request.headers);
    if (basicUser === undefined) return authenticator.identify(request.headers);
    const attempt = await lockout.begin(basicUser, clientAddress(request, lockout.trusted));
    const who = await authenticator.identify(request.headers);
    if (who.failure) {
      request.log.info({ username: basicUser }, 'registry basic auth failed');
      await attempt.failed();
    } else await attempt.succeeded();
    return who;
  };

  // Callback style so a cached token costs no promise (the /validate hot path).
  app.addHook('onRequest', (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
    scopes.refreshIfStale();
    try {
      const cached = authenticator.identifyCached(request.headers);
      if (cached) {
        apply(request, cached);
        return done();
      }
    } catch (err) {
      return done(err as Error);
    }
    identify(request).then(
      (who) => {
        try {
          apply(request, who);
          done();
        } catch (err) {
          done(err as Error);
        }
      },
      (err: Error) => done(err),
    );
  });

  attachCsrfCheck(app);

  await app.register(loginRoutes);
  await app.register(tokenRoutes);
  await app.register(scopeRoutes);
  await app.register(groupRoutes);
  await app.register(validateRoutes);
}

export default fp(registryAuth, { name: 'registry-auth', decorators: { fastify: ['sb'] } });
