import t from 'tap';
import { classifyIp, classifyUrl, refusedClass } from '../../core/address-guard.ts';

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
  t.equal(await refusedClass(new URL('http://169.254.169.254/latest/meta-data'), ['metadata', 'link-local']), 'metadata');
  t.equal(await refusedClass(new URL('http://127.0.0.1:9000/mcp'), ['metadata', 'link-local']), undefined, 'loopback backends are allowed for MCP servers');
});
