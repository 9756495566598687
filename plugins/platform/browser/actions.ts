import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  ActionResult,
  ClickRequest,
  EvaluateRequest,
  EvaluateResult,
  NavigateRequest,
  NavigateResult,
  PageContent,
  Screenshot,
  TypeRequest,
  type BrowserProvider,
} from '../../../core/primitives/browser.ts';
import { requireCapability } from '../capability.ts';
import { actionFailed, browserFor, ownedSession, principalOf } from './sessions.ts';

const tags = ['browser'];
const params = Type.Object({ session_id: Type.String({ minLength: 1 }) });

/**
 * The interaction endpoints. Order matters: the session is checked first (400
 * unknown, 403 not owned), then the capability (501), then the provider runs
 * and a failure of the page action is a 400.
 */
const actions: FastifyPluginAsyncTypebox = async (app) => {
  async function run<T>(
    request: Parameters<typeof browserFor>[1] & { params: { session_id: string } },
    capability: string,
    what: string,
    fn: (p: BrowserProvider, id: string) => Promise<T>,
  ): Promise<T> {
    const provider = browserFor(app.sb, request);
    const id = request.params.session_id;
    await ownedSession(provider, id, principalOf(request), 400);
    requireCapability(provider, capability, what);
    try {
      return await fn(provider, id);
    } catch (err) {
      throw actionFailed(id, what, err);
    }
  }

  app.post(
    '/sessions/:session_id/navigate',
    {
      schema: { tags, summary: 'Navigate to a URL', params, body: NavigateRequest, response: { 200: NavigateResult } },
    },
    async (request) =>
      run(request, 'navigation', 'navigation', (p, id) =>
        p.navigate(id, request.body.url, { timeoutMs: request.body.timeout_ms }),
      ),
  );
  app.get(
    '/sessions/:session_id/screenshot',
    {
      schema: {
        tags,
        summary: 'PNG screenshot of the page, base64',
        params,
        querystring: Type.Object({
          full_page: Type.Boolean({ default: false, description: 'The whole page instead of the viewport' }),
        }),
        response: { 200: Screenshot },
      },
    },
    async (request) =>
      run(request, 'screenshots', 'screenshots', (p, id) => p.screenshot(id, { fullPage: request.query.full_page })),
  );
  app.get(
    '/sessions/:session_id/content',
    { schema: { tags, summary: 'HTML of the page', params, response: { 200: PageContent } } },
    async (request) => run(request, 'navigation', 'reading page content', (p, id) => p.content(id)),
  );
  app.post(
    '/sessions/:session_id/click',
    {
      schema: {
        tags,
        summary: 'Click the element matching a selector',
        params,
        body: ClickRequest,
        response: { 200: ActionResult },
      },
    },
    async (request) => run(request, 'navigation', 'clicking', (p, id) => p.click(id, request.body.selector)),
  );
  app.post(
    '/sessions/:session_id/type',
    {
      schema: {
        tags,
        summary: 'Type text into the element matching a selector',
        params,
        body: TypeRequest,
        response: { 200: ActionResult },
      },
    },
    async (request) =>
      run(request, 'navigation', 'typing', (p, id) => p.typeText(id, request.body.selector, request.body.text)),
  );
  app.post(
    '/sessions/:session_id/evaluate',
    {
      schema: {
        tags,
        summary: 'Evaluate a JavaScript expression in the page',
        params,
        body: EvaluateRequest,
        response: { 200: EvaluateResult },
      },
    },
    async (request) =>
      run(request, 'evaluate', 'evaluating JavaScript', (p, id) => p.evaluate(id, request.body.expression)),
  );
};

export default actions;
