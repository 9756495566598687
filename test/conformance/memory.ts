import type { MemoryProvider } from '../../core/primitives/memory.ts';
import { caseRunner, type Runner, type SuiteOptions } from './kit.ts';

/**
 * The memory conformance suite. Every memory provider runs it; an outside
 * package imports it and passes its own tap `t`. Cases are named so a provider
 * can skip one with a reason (e.g. no branches).
 */
export async function memoryConformance(t: Runner, opts: SuiteOptions<MemoryProvider>): Promise<void> {
  const it = caseRunner(t, opts);

  await it('store then retrieve returns the record', async (t, m) => {
    const r = await m.store('notes', { key: 'k1', content: 'hello', metadata: { tag: 'a' } });
    t.match(r, { namespace: 'notes', key: 'k1', content: 'hello', metadata: { tag: 'a' } });
    t.ok(Date.parse(r.created_at) > 0 && Date.parse(r.updated_at) > 0, 'timestamps are ISO dates');
    t.match(await m.retrieve('notes', 'k1'), { key: 'k1', content: 'hello' });
    t.equal(await m.retrieve('notes', 'missing'), undefined, 'a missing key is undefined, not an error');
  });

  await it('storing a key again replaces it and keeps created_at', async (t, m) => {
    const a = await m.store('notes', { key: 'k', content: 'one' });
    await new Promise((r) => setTimeout(r, 5));
    const b = await m.store('notes', { key: 'k', content: 'two' });
    t.equal(b.content, 'two');
    t.equal(b.created_at, a.created_at);
    t.ok(b.updated_at >= a.updated_at);
    t.equal((await m.list('notes', { limit: 10, offset: 0 })).total, 1);
  });

  await it('namespaces are isolated, including look-alike names', async (t, m) => {
    await m.store('a', { key: 'x', content: 'in a' });
    await m.store('a:b', { key: 'x', content: 'in a:b' });
    t.equal((await m.retrieve('a', 'x'))?.content, 'in a');
    t.equal((await m.retrieve('a:b', 'x'))?.content, 'in a:b');
    t.equal((await m.list('a', { limit: 10, offset: 0 })).total, 1);
    t.same((await m.namespaces()).filter((n) => n === 'a' || n === 'a:b').sort(), ['a', 'a:b']);
  });

  await it('list pages with limit and offset and reports the total', async (t, m) => {
    for (let i = 0; i < 7; i++) await m.store('many', { key: `k${i}`, content: `c${i}` });
    const p1 = await m.list('many', { limit: 3, offset: 0 });
    const p3 = await m.list('many', { limit: 3, offset: 6 });
    t.equal(p1.total, 7);
    t.equal(p1.records.length, 3);
    t.equal(p3.records.length, 1);
    const keys = new Set(
      [...p1.records, ...(await m.list('many', { limit: 3, offset: 3 })).records, ...p3.records].map((r) => r.key),
    );
    t.equal(keys.size, 7, 'pages do not overlap');
  });

  await it('delete removes the record and says whether it existed', async (t, m) => {
    await m.store('notes', { key: 'gone', content: 'bye' });
    t.equal(await m.delete('notes', 'gone'), true);
    t.equal(await m.retrieve('notes', 'gone'), undefined);
    t.equal(await m.delete('notes', 'gone'), false);
  });

  await it('search ranks the relevant record first and honours top_k and filters', async (t, m) => {
    await m.store('kb', {
      key: 'cats',
      content: 'Cats are small domesticated carnivorous mammals that purr',
      metadata: { kind: 'animal' },
    });
    await m.store('kb', {
      key: 'rust',
      content: 'Rust is a systems programming language focused on safety',
      metadata: { kind: 'tech' },
    });
    await m.store('kb', {
      key: 'paris',
      content: 'Paris is the capital city of France on the Seine',
      metadata: { kind: 'place' },
    });
    await m.store('kb', {
      key: 'dogs',
      content: 'Dogs are loyal domesticated mammals that bark',
      metadata: { kind: 'animal' },
    });
    const hits = await m.search('kb', { query: 'programming language safety', top_k: 2 });
    t.equal(hits[0]?.record.key, 'rust');
    t.ok(hits.length <= 2);
    t.ok(hits[0].score > 0);
    const animals = await m.search('kb', { query: 'domesticated mammals', top_k: 10, filters: { kind: 'animal' } });
    t.same(animals.map((h) => h.record.key).sort(), ['cats', 'dogs']);
    const after = await m.search('kb', { query: 'capital France', top_k: 3 });
    t.equal(after[0]?.record.key, 'paris');
    await m.delete('kb', 'paris');
    t.notOk(
      (await m.search('kb', { query: 'capital France', top_k: 3 })).some((h) => h.record.key === 'paris'),
      'deleted records leave the index',
    );
  });

  await it('events come back in order, turns are the last K', async (t, m) => {
    for (let i = 0; i < 4; i++)
      await m.createEvent('alice', 's1', {
        messages: [
          { role: 'user', text: `q${i}` },
          { role: 'assistant', text: `a${i}` },
        ],
      });
    const events = await m.listEvents('alice', 's1');
    t.same(
      events.map((e) => e.messages[0].text),
      ['q0', 'q1', 'q2', 'q3'],
    );
    const one = await m.getEvent('alice', 's1', events[1].event_id);
    t.equal(one?.messages[1].text, 'a1');
    const turns = await m.turns('alice', 's1', 2);
    t.same(
      turns.map((x) => x.messages[0].text),
      ['q2', 'q3'],
    );
    t.equal(await m.deleteEvent('alice', 's1', events[0].event_id), true);
    t.equal((await m.listEvents('alice', 's1')).length, 3);
  });

  await it('actors and their sessions are listed with counts and last activity', async (t, m) => {
    await m.createEvent('bob', 'x', { messages: [{ role: 'user', text: 'hi' }] });
    await m.createEvent('bob', 'y', {
      messages: [
        { role: 'user', text: 'a' },
        { role: 'assistant', text: 'b' },
      ],
    });
    await m.createEvent('carol', 'z', { messages: [{ role: 'user', text: 'yo' }] });
    t.ok((await m.actors()).includes('bob') && (await m.actors()).includes('carol'));
    const sessions = await m.sessions('bob');
    t.same(sessions.map((s) => s.session_id).sort(), ['x', 'y']);
    t.equal(sessions.find((s) => s.session_id === 'y')?.message_count, 2);
  });

  await it('a branch forks the conversation at an event', async (t, m) => {
    const e1 = await m.createEvent('dan', 's', { messages: [{ role: 'user', text: 'one' }] });
    await m.createEvent('dan', 's', { messages: [{ role: 'user', text: 'two' }] });
    const b = await m.createBranch!('dan', 's', {
      name: 'alt',
      root_event_id: e1.event_id,
      messages: [{ role: 'user', text: 'two-prime' }],
    });
    t.match(b, { name: 'alt', root_event_id: e1.event_id });
    t.same(
      (await m.listEvents('dan', 's', { branch: 'alt' })).map((e) => e.messages[0].text),
      ['one', 'two-prime'],
    );
    t.same(
      (await m.listEvents('dan', 's')).map((e) => e.messages[0].text),
      ['one', 'two'],
      'the main line is unchanged',
    );
    t.same(
      (await m.listBranches!('dan', 's')).map((x) => x.name),
      ['alt'],
    );
    await t.rejects(
      m.createBranch!('dan', 's', { name: 'alt', root_event_id: e1.event_id }),
      {},
      'a branch name is taken once per session',
    );
    await t.rejects(
      m.createBranch!('dan', 's', { name: 'nowhere', root_event_id: 'no-such-event' }),
      {},
      'forking needs an existing event',
    );
  });

  await it('memory resources and their strategies', async (t, m) => {
    const r = await m.createResource!({
      name: 'support',
      description: 'support bot memory',
      strategies: [{ name: 'facts', type: 'semantic', namespaces: ['facts'], config: {} }],
    });
    t.equal(r.strategies.length, 1);
    t.match(await m.getResource!(r.memory_id), { name: 'support' });
    const s = await m.addStrategy!(r.memory_id, {
      name: 'summary',
      type: 'summary',
      namespaces: ['sum'],
      config: { max: 3 },
    });
    t.same(
      (await m.listStrategies!(r.memory_id)).map((x) => x.name),
      ['facts', 'summary'],
    );
    t.equal(await m.deleteStrategy!(r.memory_id, s.strategy_id), true);
    t.equal((await m.listResources!()).length, 1);
    t.equal(await m.deleteResource!(r.memory_id), true);
    t.equal(await m.getResource!(r.memory_id), undefined);
  });

  await it('healthcheck answers a known state', async (t, m) => {
    t.ok(['ok', 'reachable', 'down'].includes(await m.healthcheck()));
  });
}
