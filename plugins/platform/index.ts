import type { FastifyPluginAsync } from 'fastify';
import auth, { authConfigRoute } from './auth.ts';
import enforcement from './enforcement.ts';
import providers from './providers.ts';
import memory from './memory/index.ts';
import llm from './llm/index.ts';
import agents from './agents/index.ts';
import teams from './teams/index.ts';
import browser from './browser/index.ts';
import { LiveViewSigner, liveViewRoutes } from './browser/live-view.ts';
import type { BrowserProvider } from '../../core/primitives/browser.ts';
import tools from './tools/index.ts';
import policy from './policy/index.ts';
import evaluations from './evaluations/index.ts';
import identity from './identity/index.ts';
import workloadJwks from './identity/jwks.ts';
import codeInterpreter from './code-interpreter/index.ts';
import observability from './observability/index.ts';
import credentials from './credentials/index.ts';

/** The platform gateway surface: everything under /api/v1 plus /auth/config. */
const platform: FastifyPluginAsync = async (app) => {
  await app.register(authConfigRoute);
  await app.register(workloadJwks);
  const signer = new LiveViewSigner();
  // The live viewer is opened from a signed link in any browser, so it sits outside the /api/v1 auth scope.
  await app.register(
    liveViewRoutes(signer, (name) => app.sb.providers.get<BrowserProvider>('browser', name)),
    { prefix: '/api/v1/browser/live' },
  );
  await app.register(
    async (v1) => {
      await v1.register(auth);
      // After authentication, before any route: decides every request when policy enforcement is on.
      await v1.register(enforcement);
      await v1.register(providers);
      await v1.register(memory, { prefix: '/memory' });
      await v1.register(llm, { prefix: '/llm' });
      await v1.register(agents, { prefix: '/agents' });
      await v1.register(teams, { prefix: '/teams' });
      await v1.register(browser, { prefix: '/browser', signer });
      await v1.register(tools, { prefix: '/tools' });
      await v1.register(policy, { prefix: '/policy' });
      await v1.register(evaluations, { prefix: '/evaluations' });
      await v1.register(identity, { prefix: '/identity' });
      await v1.register(codeInterpreter, { prefix: '/code-interpreter' });
      await v1.register(observability, { prefix: '/observability' });
      await v1.register(credentials, { prefix: '/credentials' });
    },
    { prefix: '/api/v1' },
  );
};

export default platform;
