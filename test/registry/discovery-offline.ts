import type { AgentRecord, ServerRecord, SkillRecord } from '../../plugins/registry/catalog/records.ts';
import { agentDoc, ENTITY_KINDS, serverDocs, skillDoc } from '../../plugins/registry/discovery/documents.ts';
import { SifEmbedder } from '../../plugins/registry/discovery/embedder.ts';
import { DiscoveryEngine, type Hit } from '../../plugins/registry/discovery/engine.ts';
import { attachWordKnowledge } from '../../plugins/registry/discovery/meaning.ts';
import { wordRelations } from '../../plugins/registry/discovery/word-relations.ts';
import { wordVectors } from '../../plugins/registry/discovery/word-vectors.ts';
import { entities } from './discovery-fixture.ts';

/**
 * The development set indexed straight into an engine, without an app: the
 * tuning loop (npx tsx test/registry/discovery-offline.ts) and the bench use it.
 * The quality test goes through the HTTP route instead.
 */
export function fixtureEngine(): DiscoveryEngine {
  const wv = wordVectors();
  const engine = new DiscoveryEngine(wv ? new SifEmbedder(wv) : undefined);
  if (wv) attachWordKnowledge(engine, wv);
  const relations = wordRelations();
  if (relations) engine.wordRelations = relations;
  for (const s of entities.servers)
    engine.replaceGroup(`server:${s.path}`, serverDocs({ ...s, metadata: {} } as unknown as ServerRecord));
  for (const a of entities.agents) engine.replaceGroup(`agent:${a.path}`, [agentDoc(a as unknown as AgentRecord)]);
  for (const k of entities.skills) {
    const rec = { ...k, path: `/skills/${k.name}`, allowed_tools: [] } as unknown as SkillRecord;
    engine.replaceGroup(`skill:${rec.path}`, [skillDoc(rec)]);
  }
  return engine;
}

export const hitId = (h: Hit) => h.doc.id;
export const allKinds = new Set(ENTITY_KINDS);

if (process.argv[1]?.endsWith('discovery-offline.ts')) {
  const { evaluate, table } = await import('./discovery-fixture.ts');
  const engine = fixtureEngine();
  const { rows, misses } = await evaluate(async (q) =>
    engine.search(q, { kinds: allKinds, perKind: 10, allow: () => true }).map(hitId),
  );
  console.log(table(rows));
  if (process.env.DISCOVERY_MISSES)
    for (const m of misses) {
      console.log(JSON.stringify({ q: m.query, c: m.category, ndcg: m.ndcg.toFixed(2) }));
      for (const h of engine.search(m.query, { kinds: allKinds, perKind: 10, allow: () => true }).slice(0, 4))
        console.log(
          `   ${h.relevance_score.toFixed(3)} lex ${h.lexical.toFixed(2)} sem ${h.semantic.toFixed(2)} ${h.doc.id}`,
        );
    }
}
