import t, { type Test } from 'tap';
import { makeApp } from '../helpers/app.ts';
import { asUser } from '../helpers/registry-auth.ts';

t.setTimeout(900_000);

const SAFE_VERDICT = '{"verdict": "safe", "findings": []}';

/** Scanners: yara, and llm judges on scripted llms (one slow, one that calls everything unsafe). */
function config(scanning: Record<string, unknown>) {
  return {
    providers: {
      llm: {
        instances: {
          slow: { type: 'scripted', options: { delay_ms: 3000, responses: [{ content: SAFE_VERDICT }] } },
          strict: {
            type: 'scripted',
            options: {
              responses: [
                {
                  content:
                    'Verdict:\n```json\n{"verdict": "unsafe", "findings": [{"location": "tools/add", "severity": "high", "threat": "tool_poisoning", "reason": "asks for a file"}]}\n```',
                },
              ],
            },
          },
        },
      },
      scanners: {
        instances: {
          yara: { type: 'yara' },
          slow_judge: { type: 'llm', options: { llm: 'slow' } },
          judge: { type: 'llm', options: { llm: 'strict' } },
        },
      },
    },
    registry: { scanning },
  };
}

async function setup(t: Test, scanning: Record<string, unknown>) {
  const app = await makeApp(t, config(scanning));
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  const register = (path: string) =>
    app.inject({
      method: 'POST',
      url: '/api/servers/register',
      headers: admin,
      payload: {
        name: path,
        description: 'd',
        path,
        proxy_pass_url: `http://127.0.0.1:9${path}`,
        tool_list_json: [{ name: 'add', description: 'Adds two numbers', inputSchema: { type: 'object' } }],
      },
    });
  return { app, admin, register };
}

const SLOW = { server: { analyzers: ['yara', 'slow_judge'], timeout_seconds: 0.3 } };

t.test(
  'a scanner timeout with on_scan_failure pending (the default): registered disabled, security-pending, SCAN_FAILED',
  async (t) => {
    const { register } = await setup(t, SLOW);
    const res = await register('/calc');
    t.equal(res.statusCode, 201, res.body);
    t.match(res.json(), {
      is_enabled: false,
      tags: ['security-pending'],
      security_scan: { status: 'SCAN_FAILED', is_safe: false, scan_failed: true, blocked: true },
    });
    t.match(res.json().security_scan.errors, [/slow_judge' did not finish within 0.3 s/]);
  },
);

t.test(
  'on_scan_failure allow: registered enabled, but the result still says the scan failed (never SAFE)',
  async (t) => {
    const { register, app, admin } = await setup(t, { ...SLOW, on_scan_failure: 'allow' });
    const res = await register('/calc');
    t.match(res.json(), { is_enabled: true, tags: [], security_scan: { status: 'SCAN_FAILED', scan_failed: true } });
    t.not(res.json().security_scan.status, 'SAFE');
    const stored = (await app.inject({ url: '/api/servers/calc/security-scan', headers: admin })).json();
    t.match(stored, {
      scan_failed: true,
      is_safe: false,
      analysis_results: { slow_judge: { error: /did not finish/ } },
    });
  },
);

t.test('on_scan_failure block: the registration is refused with a 503 naming the failure', async (t) => {
  const { register, app, admin } = await setup(t, { ...SLOW, on_scan_failure: 'block' });
  const res = await register('/calc');
  t.equal(res.statusCode, 503);
  t.match(res.json(), {
    code: 'SB_ERR_SCAN_FAILED',
    detail: /security scan of \/calc failed .*slow_judge.*on_scan_failure is block/,
  });
  t.equal((await app.inject({ url: '/api/servers/calc', headers: admin })).statusCode, 404, 'not registered');
});

t.test('an analyzer that is not installed fails the scan; asked for by a rescan it is a 501 or 400', async (t) => {
  const { register, app, admin } = await setup(t, { server: { analyzers: ['yara', 'behavioral'] } });
  const res = await register('/calc');
  t.match(res.json(), {
    is_enabled: false,
    security_scan: { status: 'SCAN_FAILED', errors: [/'behavioral' is not available/] },
  });
  const r501 = await app.inject({
    method: 'POST',
    url: '/api/servers/calc/rescan?analyzers=yara,reputation',
    headers: admin,
  });
  t.equal(r501.statusCode, 501);
  t.match(r501.json(), { code: 'SB_ERR_SCAN_ANALYZER_UNAVAILABLE', detail: /reputation.*API key/ });
  const r400 = await app.inject({ method: 'POST', url: '/api/servers/calc/rescan?analyzers=nope', headers: admin });
  t.equal(r400.statusCode, 400);
  t.match(r400.json().detail, /Unknown analyzer 'nope'. Available: .*yara/);
  // A name Object.prototype has is unknown too (it read as "not available: function Object()" with a 501).
  const proto = await app.inject({
    method: 'POST',
    url: '/api/servers/calc/rescan?analyzers=constructor',
    headers: admin,
  });
  t.equal(proto.statusCode, 400);
  t.match(proto.json().detail, /Unknown analyzer 'constructor'/);
  // A clean rescan with installed analyzers lifts the block the failed scan set.
  const ok = await app.inject({ method: 'POST', url: '/api/servers/calc/rescan?analyzers=yara', headers: admin });
  t.match(ok.json(), { status: 'SAFE', is_enabled: true });
  t.match((await app.inject({ url: '/api/servers/calc', headers: admin })).json(), { is_enabled: true, tags: [] });
});

t.test('the llm analyzer: a configured llm judges with a JSON verdict; unsafe blocks', async (t) => {
  const { register } = await setup(t, { server: { analyzers: ['judge'] } });
  const res = await register('/calc');
  t.match(res.json(), {
    is_enabled: false,
    security_scan: { status: 'UNSAFE', high: 1, analyzers_used: ['judge'] },
  });
});
