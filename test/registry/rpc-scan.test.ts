import t, { type Test } from 'tap';
import { scanRpcCalls, type RpcCall } from '../../plugins/registry/auth/rpc-scan.ts';
import { rpcCallsOf } from '../../plugins/registry/auth/routes/validate.ts';

/**
 * The scanner must never read a body differently from JSON.parse: whatever it
 * answers is compared with the calls JSON.parse's document leads to, on fixed
 * edge cases, on generated bodies (duplicate keys, escapes, numbers, nesting,
 * batches) and on broken copies of them.
 */

/**
 * The reading the scanner stands in for: JSON.parse, then /validate's own
 * reading of a parsed body (a body that parses to a string holds no calls).
 */
function reference(text: string): RpcCall[] | 'invalid' {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'invalid';
  }
  return typeof value === 'string' ? [] : rpcCallsOf(value);
}

/** Mulberry32: a seeded generator, so a failure names a case that can be run again. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * One body through both readings. Returns what the scanner answered and, when
 * the readings differ, what went wrong (collected, so a run reports every
 * mismatching body at once instead of thousands of passing assertions).
 */
function compare(text: string): { scanned: RpcCall[] | undefined; problem?: string } {
  const scanned = scanRpcCalls(text);
  const want = reference(text);
  const shown = JSON.stringify(text).slice(0, 200);
  if (scanned !== undefined) {
    if (want === 'invalid') return { scanned, problem: `the scanner took text JSON.parse refuses: ${shown}` };
    if (JSON.stringify(scanned) !== JSON.stringify(want))
      return { scanned, problem: `${shown}: scanned ${JSON.stringify(scanned)}, JSON.parse ${JSON.stringify(want)}` };
  }
  // Through the function /validate calls, the answer is JSON.parse's, whichever path it takes.
  if (want !== 'invalid' && JSON.stringify(rpcCallsOf(text)) !== JSON.stringify(want))
    return { scanned, problem: `${shown}: rpcCallsOf differs from JSON.parse` };
  return { scanned };
}

function checkOne(t: Test, text: string): RpcCall[] | undefined {
  const { scanned, problem } = compare(text);
  if (problem) t.fail(problem);
  return scanned;
}

t.test('fixed cases: what it takes matches JSON.parse, and what it leaves to JSON.parse', async (t) => {
  const taken = [
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"current_time_by_timezone","arguments":{"tz":"UTC"}}}',
    '  {"method" : "tools/list" }  ',
    '{}',
    '[]',
    '[{}]',
    '"just a string"',
    '"{\\"method\\":\\"a string of JSON is no call\\"}"',
    '42',
    'null',
    '{"method":1}',
    '{"method":"a","method":"b"}',
    '{"method":"a","method":null}',
    '{"method":"tools/call","params":{"name":"a"},"params":{}}',
    '{"method":"tools/call","params":{"name":"a"},"params":"x"}',
    '{"method":"tools/call","params":{"name":"a","name":2}}',
    '{"method":"tools/call","params":{"name":2,"name":"b"}}',
    '{"method":"tools/call","params":[]}',
    '{"method":"tools/call","params":{"arguments":{"name":"inner"}}}',
    '{"method":"tools/list","params":{"name":"ignored for other methods"}}',
    '{"params":{"name":"x"},"method":"tools/call"}',
    '[[{"method":"nested batches are not calls"}]]',
    '[{"method":"a"},{"method":"tools/call","params":{"name":"t"}},1,"s",null,[]]',
    '{"method":"x","other":"with \\"escapes\\" \\u00e9 \\n inside"}',
    '{"method":"x","n":[-0,0.5,-1.25e+10,3E-2,1e5,0]}',
    '{"method":"x","deep":[[[[{"a":[true,false,null]}]]]]}',
    '{"__proto__":{"method":"x"},"method":"y"}',
    '{"method":"é ü 日本"}',
  ];
  for (const text of taken) t.not(checkOne(t, text), undefined, `the scanner takes ${text}`);

  const refused = [
    '',
    '   ',
    '{',
    '{"method":"x"',
    '{"method":"x"} x',
    '{"method":"x",}',
    '[1,]',
    '{"method" "x"}',
    '{method:"x"}',
    "{'method':'x'}",
    '01',
    '-',
    '1.',
    '1e',
    '+1',
    '.5',
    '"\\x"',
    '"\\u12G4"',
    '"unterminated',
    '{"a":tru}',
    'nul',
    'NaN',
    '{"method":"x"}}',
    '[{"method":"x"}]]',
    '{"m\\u0065thod":"tools/call","params":{"name":"t"}}',
    '{"method":"tools\\/call","params":{"name":"t"}}',
    '{"method":"tools/call","params":{"n\\u0061me":"t"}}',
    '{"method":"tools/call","params":{"name":"t\\u0000"}}',
    '{"method":"x",\t"a":1}',
    '{"method":"tab\tinside"}',
    '\u00a0{"method":"x"}',
    `${'['.repeat(65)}${']'.repeat(65)}`,
    Buffer.from('{"method":"tools/call","params":{"name":"b64"}}').toString('base64'),
  ];
  for (const text of refused)
    t.equal(checkOne(t, text), undefined, `left to JSON.parse: ${JSON.stringify(text).slice(0, 80)}`);

  // Escapes and base64 are still read, by the fallback, exactly as JSON.parse reads them.
  t.strictSame(rpcCallsOf('{"m\\u0065thod":"tools/call","params":{"n\\u0061me":"t"}}'), [
    { method: 'tools/call', tool: 't' },
  ]);
  t.strictSame(rpcCallsOf(Buffer.from('{"method":"tools/call","params":{"name":"b64"}}').toString('base64')), [
    { method: 'tools/call', tool: 'b64' },
  ]);
  t.strictSame(rpcCallsOf(`${'['.repeat(63)}${']'.repeat(63)}`), []);
  t.not(scanRpcCalls(`${'['.repeat(63)}${']'.repeat(63)}`), undefined, 'nesting up to the limit is taken');
});

/** Random JSON text as members and tokens, so duplicate keys and odd spacing can be written (JSON.stringify cannot). */
function generator(rand: () => number) {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const KEYS = [
    'method',
    'params',
    'name',
    'jsonrpc',
    'id',
    'arguments',
    'x',
    '__proto__',
    'methods',
    'Method',
    'nam',
    'méthode',
    '',
  ];
  const PLAIN_STRINGS = [
    'tools/call',
    'tools/list',
    'initialize',
    'current_time',
    'a b',
    'é',
    '日本',
    '',
    'name',
    'method',
    '{',
    '}',
    '[',
    ']',
    ':',
    ',',
  ];
  const ESCAPED_STRINGS = ['tools\\/call', 'a\\"b', '\\\\', '\\u0041', '\\ud83d\\ude00', '\\n\\t', '\\u00e9'];
  const NUMBERS = ['0', '-0', '1', '-12', '3.25', '1e3', '-2.5E-3', '1E+2', '10', '123456789012345678901234567890'];
  const space = () => (rand() < 0.7 ? '' : rand() < 0.97 ? pick([' ', '  ']) : pick([' \t', '\n', '\r\n ']));
  let plain = true;
  const string = (needPlain: boolean) => {
    if (!needPlain && rand() < 0.3) {
      // Escapes in values the scanner only skips keep it on the fast path.
      return `"${pick(ESCAPED_STRINGS)}"`;
    }
    if (needPlain && rand() < 0.05) {
      plain = false;
      return `"${pick(ESCAPED_STRINGS)}"`;
    }
    return `"${pick(PLAIN_STRINGS)}"`;
  };
  const value = (depth: number, role: 'call' | 'params' | 'other', key?: string): string => {
    const r = rand();
    const needPlain = (role === 'call' && key === 'method') || (role === 'params' && key === 'name');
    if (depth > 5 || r < 0.35) {
      const k = rand();
      if (k < 0.55) return string(needPlain);
      if (k < 0.8) return pick(NUMBERS);
      return pick(['true', 'false', 'null']);
    }
    if (r < 0.7) {
      const nextRole = role === 'call' && key === 'params' ? 'params' : 'other';
      return object(depth + 1, nextRole);
    }
    const n = Math.floor(rand() * 4);
    const parts = Array.from({ length: n }, () => `${space()}${value(depth + 1, 'other')}${space()}`);
    return `[${parts.join(',')}${n ? '' : space()}]`;
  };
  const object = (depth: number, role: 'call' | 'params' | 'other'): string => {
    const n = Math.floor(rand() * 5);
    const members: string[] = [];
    for (let i = 0; i < n; i++) {
      const key =
        role === 'call'
          ? pick(['method', 'params', 'method', 'params', ...KEYS])
          : role === 'params'
            ? pick(['name', 'name', 'arguments', ...KEYS])
            : pick(KEYS);
      let keyText = `"${key}"`;
      if (key && rand() < 0.03) {
        plain = false;
        keyText = `"\\u${key.charCodeAt(0).toString(16).padStart(4, '0')}${key.slice(1)}"`;
      }
      members.push(`${space()}${keyText}${space()}:${space()}${value(depth, role, key)}${space()}`);
    }
    return `{${members.join(',')}${n ? '' : space()}}`;
  };
  return {
    body(): { text: string; plain: boolean } {
      plain = true;
      const text =
        rand() < 0.3
          ? `[${Array.from({ length: 1 + Math.floor(rand() * 3) }, () => `${space()}${rand() < 0.85 ? object(1, 'call') : value(1, 'other')}${space()}`).join(',')}]`
          : `${space()}${object(0, 'call')}${space()}`;
      // Tabs and line breaks send the whole text to JSON.parse (a header holds none).
      return { text, plain: plain && !/[\t\n\r]/.test(text) };
    },
  };
}

t.test('generated bodies: taken ones read as JSON.parse reads them, and plain ones are taken', async (t) => {
  const rand = prng(0x5eed);
  const gen = generator(rand);
  let taken = 0;
  let plainBodies = 0;
  const problems: string[] = [];
  for (let i = 0; i < 5000; i++) {
    const { text, plain } = gen.body();
    if (reference(text) === 'invalid') problems.push(`the generator wrote invalid JSON: ${text}`);
    const { scanned, problem } = compare(text);
    if (problem) problems.push(problem);
    if (plain) {
      plainBodies++;
      if (scanned === undefined) problems.push(`a plain body was not taken: ${text}`);
    }
    if (scanned !== undefined) taken++;
  }
  t.strictSame(problems, [], 'every generated body reads the same both ways');
  t.ok(
    plainBodies > 2000 && taken >= plainBodies,
    `most generated bodies are plain and taken (${taken} of 5000, ${plainBodies} plain)`,
  );
});

t.test('broken bodies: truncated, cut and spliced copies never read differently', async (t) => {
  const rand = prng(0xb40c3);
  const gen = generator(rand);
  const NOISE = ['{', '}', '[', ']', '"', ':', ',', '\\', '-', '.', 'e', '0', '1', 't', 'n', ' ', '\u0001', 'é'];
  let refused = 0;
  const problems: string[] = [];
  for (let i = 0; i < 5000; i++) {
    const { text } = gen.body();
    const at = Math.floor(rand() * (text.length + 1));
    const kind = rand();
    let broken: string;
    if (kind < 0.25) broken = text.slice(0, at);
    else if (kind < 0.5) broken = text.slice(0, at) + text.slice(at + 1);
    else if (kind < 0.75) broken = text.slice(0, at) + NOISE[Math.floor(rand() * NOISE.length)] + text.slice(at);
    else broken = text.slice(0, at) + NOISE[Math.floor(rand() * NOISE.length)] + text.slice(at + 1);
    const { scanned, problem } = compare(broken);
    if (problem) problems.push(problem);
    if (scanned === undefined) refused++;
  }
  t.strictSame(problems, [], 'no broken body reads differently');
  t.ok(refused > 1000, `many broken bodies are refused and left to JSON.parse (${refused} of 5000)`);
});
