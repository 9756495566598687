import t from 'tap';
import { apiKeyAuthSection, keyHeader } from '../fixtures/api-key-users.ts';
import { agentApp, llmRequests, parseSse } from '../agents/helpers.ts';

const BREAK_GLASS = 'permit(principal, action, resource) when { principal.is_admin };';

t.test(
  "an agent's tool call denied by policy is a tool error the model sees, recorded in the events; the run completes",
  async (t) => {
    const app = await agentApp(t, {
      memory: 'in_memory',
      config: {
        providers: {
          auth: apiKeyAuthSection({ root: { admin: true } }),
          policy: {
            default: 'cedar',
            instances: {
              cedar: { type: 'cedar', options: { enforce: true, engine: 'main', bootstrap_policies: [BREAK_GLASS] } },
            },
          },
        },
      },
      steps: [
        { tool_calls: [{ id: 'r1', name: 'remember', input: { key: 'k', content: 'v' } }] },
        { content: 'done without memory' },
      ],
    });
    const root = keyHeader('root');
    const eid = (await app.inject({ method: 'GET', url: '/api/v1/policy/enforcement', headers: root })).json()
      .engine_id as string;
    const forbid = await app.inject({
      method: 'POST',
      url: `/api/v1/policy/engines/${eid}/policies`,
      headers: root,
      payload: {
        policy_body:
          'forbid(principal, action == Action::"tools:invoke", resource == Tool::"remember") when { context has agent && context.agent == Agent::"diary" };',
      },
    });
    t.equal(forbid.statusCode, 201);
    t.equal(
      (
        await app.inject({
          method: 'POST',
          url: '/api/v1/agents',
          headers: root,
          payload: { name: 'diary', model: 'm', primitives: { memory: { enabled: true, namespace: 'diary' } } },
        })
      ).statusCode,
      201,
    );

    const r = await app.inject({
      method: 'POST',
      url: '/api/v1/agents/diary/chat/stream',
      headers: root,
      payload: { message: 'note this', session_id: 's1' },
    });
    t.equal(r.statusCode, 200);
    const evs = parseSse(r.body);
    const result = evs.find((e) => e.type === 'tool_call_result');
    t.match(result, { name: 'remember', id: 'r1', result: /denied by policy/ }, 'the event stream records the denial');
    t.match(evs.at(-1), { type: 'done', response: 'done without memory' }, 'the run completes');
    const seen = (llmRequests(app)[1]!.messages.at(-1) as { tool_results: Array<{ content: string }> }).tool_results[0]!
      .content;
    t.match(seen, /denied by policy/, 'the model sees the tool error');
    const stored = await app.inject({ method: 'GET', url: '/api/v1/memory/diary/k', headers: root });
    t.equal(stored.statusCode, 404, 'the denied tool never ran');
  },
);
