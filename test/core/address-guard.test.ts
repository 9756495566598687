import t from 'tap';
import { createServer } from 'node:http';
import { request } from 'undici';
import {
  AddressRefusedError,
  classifyIp,
  classifyUrl,
  pinnedAddress,
  pinnedAgent,
  refusedClass,
} from '../../core/address-guard.ts';
import { parseIp } from '../../core/ip-bytes.ts';
import { fakeDns } from '../fixtures/fake-dns.ts';
import { listenLoopback } from '../fixtures/loopback.ts';
import { FORM_NAMES, HOST_FORMS } from '../fixtures/ssrf-forms.ts';

t.test('addresses are classified', async (t) => {
  t.equal(classifyIp('169.254.169.254'), 'metadata');
  t.equal(classifyIp('fd00:ec2::254'), 'metadata');
  t.equal(classifyIp('169.254.10.1'), 'link-local');
  t.equal(classifyIp('fe80::1'), 'link-local');
  t.equal(classifyIp('127.0.0.1'), 'loopback');
  t.equal(classifyIp('::1'), 'loopback');
  t.equal(classifyIp('::ffff:127.0.0.1'), 'loopback');
  t.equal(classifyIp('10.1.2.3'), 'private');
  t.equal(classifyIp('172.20.0.1'), 'private');
  t.equal(classifyIp('192.168.1.1'), 'private');
  t.equal(classifyIp('fd12::1'), 'private');
  t.equal(classifyIp('8.8.8.8'), 'public');
  t.equal(classifyIp('172.32.0.1'), 'public');
});

t.test('URLs are judged by every address their host reaches', async (t) => {
  t.same(await classifyUrl(new URL('http://metadata.google.internal/computeMetadata')), ['metadata']);
  t.same(await classifyUrl(new URL('http://[fd00:ec2::254]/latest')), ['metadata']);
  t.same(await classifyUrl(new URL('http://localhost:8080/mcp')), ['loopback']);
  t.equal(
    await refusedClass(new URL('http://169.254.169.254/latest/meta-data'), ['metadata', 'link-local']),
    'metadata',
  );
  t.equal(
    await refusedClass(new URL('http://127.0.0.1:9000/mcp'), ['metadata', 'link-local']),
    undefined,
    'loopback backends are allowed for MCP servers',
  );
});

t.test('every spelling of an address is judged by its bytes (table)', async (t) => {
  const dns = fakeDns(FORM_NAMES);
  for (const { host, cls, form } of HOST_FORMS) {
    // As a URL host (WHATWG normalises some IPv4 forms and rewrites mapped IPv6 to hex; both must hold).
    t.same(await classifyUrl(new URL(`http://${host}:8080/x`), dns), [cls], `${form}: http://${host}/`);
    // As bare text, the way a resolver or a config hands it over.
    if (parseIp(host)) t.equal(classifyIp(host), cls, `${form}: ${host} as text`);
  }
  t.equal(
    classifyIp('2001:0:4136:e378:8000:63bf:80ff:fffe'),
    'loopback',
    'Teredo: the client address (inverted) is judged',
  );
  t.equal(classifyIp('fe80::1%eth0'), 'link-local', 'a zone does not hide the address');
  t.throws(() => classifyIp('example.com'), TypeError, 'a name is not classified as an address');
  for (const notIp of ['1.2.3.4.5', '256.1.1.1', '1.16777216', '::ffff:1.2.3', '1:2:3:4:5:6:7:8:9', 'example.com'])
    t.equal(parseIp(notIp), undefined, `${notIp} is not an IP literal`);
});

t.test('refusedClass names the refused class for each form', async (t) => {
  const dns = fakeDns(FORM_NAMES);
  for (const { host, cls } of HOST_FORMS) {
    const want = cls === 'metadata' || cls === 'link-local' ? cls : undefined;
    t.equal(await refusedClass(new URL(`http://${host}/`), ['metadata', 'link-local'], dns), want, host);
  }
});

t.test(
  'DNS rebinding: the address is judged when the connection opens, and the connection goes to that address',
  async (t) => {
    let hits = 0;
    const server = createServer((_req, res) => {
      hits++;
      res.end('reached');
    });
    const base = await listenLoopback(server);
    t.teardown(() => new Promise<void>((r) => server.close(() => r())));
    const port = new URL(base).port;

    // First answer public (the registration-time check passes), then loopback when the connection opens.
    const dns = fakeDns({ 'rebind.test': ['93.184.216.34', '127.0.0.1'] });
    const policy = { refused: ['metadata', 'link-local', 'loopback', 'private'] as const, lookup: dns };
    t.equal(
      await refusedClass(new URL(`http://rebind.test:${port}/`), policy.refused, dns),
      undefined,
      'the early check sees a public address',
    );
    const agent = pinnedAgent(policy);
    t.teardown(() => agent.close());
    const err = await request(`http://rebind.test:${port}/`, { dispatcher: agent }).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.ok(err instanceof AddressRefusedError, 'the connection is refused at connect time');
    t.match(err, { addressClass: 'loopback', host: 'rebind.test' });
    t.equal(hits, 0, 'nothing reached the loopback server');

    // Allowed: the connection goes to the address the lookup gave (this name exists nowhere else).
    const open = pinnedAgent({ refused: ['metadata'], lookup: fakeDns({ 'pinned.test': ['127.0.0.1'] }) });
    t.teardown(() => open.close());
    const ok = await request(`http://pinned.test:${port}/`, { dispatcher: open });
    t.equal(await ok.body.text(), 'reached');
    t.equal(hits, 1);

    // IP literals are judged without a lookup, in whatever spelling undici hands over.
    await t.rejects(pinnedAddress('[::ffff:a9fe:a9fe]', { refused: ['metadata'] }), {
      name: 'AddressRefusedError',
      addressClass: 'metadata',
    });
    t.same(await pinnedAddress('127.1', { refused: ['metadata'] }), { address: '127.0.0.1', family: 4 });
    await t.rejects(pinnedAddress('nowhere.test', { refused: [], lookup: fakeDns({}) }), /ENOTFOUND/);
  },
);
