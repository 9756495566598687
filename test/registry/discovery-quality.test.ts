import t from 'tap';
import { makeApp } from '../helpers/app.ts';
import { wordRelations } from '../../plugins/registry/discovery/word-relations.ts';
import { asUser } from '../helpers/registry-auth.ts';
import { evaluate, rankedIds, registerAll, skillHost, table } from './discovery-fixture.ts';

/**
 * The quality goals on the development set (test/fixtures/discovery),
 * measured through POST /api/search/semantic as an admin would ask: one merged
 * ranking over the four kinds by relevance_score.
 */
t.test('discovery quality on the development set', async (t) => {
  t.setTimeout(900_000);
  const host = await skillHost();
  t.teardown(host.close);
  const app = await makeApp(t, { registry: { allow_private_skill_urls: true } });
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  await registerAll(app, admin, host.url);

  const modes = new Set<string>();
  const { rows, misses } = await evaluate(async (query) => {
    const r = await app.inject({
      method: 'POST',
      url: '/api/search/semantic',
      headers: admin,
      payload: { query, max_results: 10 },
    });
    if (r.statusCode !== 200) throw new Error(`${query}: ${r.statusCode} ${r.body}`);
    modes.add(r.json().search_mode);
    return rankedIds(r.json());
  });
  t.same([...modes], ['hybrid'], 'every answer ranked with the word vectors too');
  t.comment(`\n${table(rows)}`);
  if (process.env.DISCOVERY_MISSES) for (const m of misses) t.comment(JSON.stringify(m));
  const row = (c: string) => rows.find((r) => r.category === c)!;
  // Goals of issue 21. A goal the engine does not reach is marked todo (reported by tap, not hidden); all are met
  // on this set today (with the WordNet relations: without their cache, overall and paraphrase fall short).
  t.ok(wordRelations(), 'the word-relations cache is built (node scripts/build-word-relations.mjs)');
  t.ok(row('overall').ndcg10 >= 0.9, `overall NDCG@10 ${row('overall').ndcg10.toFixed(3)} >= 0.90`);
  t.ok(row('paraphrase').ndcg10 >= 0.75, `paraphrase NDCG@10 ${row('paraphrase').ndcg10.toFixed(3)} >= 0.75`);
  t.ok(row('typo').ndcg10 >= 0.75, `typo NDCG@10 ${row('typo').ndcg10.toFixed(3)} >= 0.75`);
  t.ok(row('no_answer').empty! >= 0.8, `no-answer queries empty above the floor: ${row('no_answer').empty} >= 0.8`);
  // What the engine reaches today, as a floor against regressions.
  t.ok(row('paraphrase').ndcg10 >= 0.77, "paraphrase NDCG@10 does not fall under today's 0.773");
  t.ok(row('skill_intent').ndcg10 >= 0.78, "skill intent NDCG@10 does not fall under today's 0.788");
});
