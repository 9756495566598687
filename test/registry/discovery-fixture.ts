import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** The development set of test/fixtures/discovery and the measures the issue asks for. */

export interface FixtureServer {
  path: string;
  server_name: string;
  description: string;
  tags: string[];
  tools: { name: string; description: string; inputSchema: Record<string, unknown> }[];
}
export interface FixtureAgent {
  path: string;
  name: string;
  description: string;
  tags: string[];
  trust_level: string;
  skills: { id: string; name: string; description: string }[];
}
export interface FixtureSkill {
  name: string;
  description: string;
  tags: string[];
  skill_md: string;
}
export interface Query {
  category: string;
  query: string;
  relevant: Record<string, number>;
}

const dir = new URL('../fixtures/discovery/', import.meta.url);
export const entities = JSON.parse(readFileSync(new URL('entities.json', dir), 'utf8')) as {
  servers: FixtureServer[];
  agents: FixtureAgent[];
  skills: FixtureSkill[];
};
export const queries = (JSON.parse(readFileSync(new URL('queries.json', dir), 'utf8')) as { queries: Query[] }).queries;

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** Serves each skill's SKILL.md on 127.0.0.1, as a registry fetches it at registration. */
export async function skillHost(): Promise<{ url: (name: string) => string; close: () => Promise<void> }> {
  const byName = new Map(entities.skills.map((k) => [k.name, k.skill_md]));
  const server: Server = createServer((req, res) => {
    const md = byName.get(decodeURIComponent((req.url ?? '').replace(/^\/|\/SKILL\.md$/g, '')));
    res.writeHead(md ? 200 : 404, { 'content-type': 'text/markdown' }).end(md ?? 'not found');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (name) => `http://127.0.0.1:${port}/${name}/SKILL.md`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** Registers the whole set through the registry's own routes (servers, agents, skills). */
export async function registerAll(
  app: FastifyInstance,
  admin: Record<string, string>,
  skillUrl: (name: string) => string,
  only?: { servers?: string[] },
): Promise<void> {
  for (const s of entities.servers) {
    if (only?.servers && !only.servers.includes(s.path)) continue;
    const r = await app.inject({
      method: 'POST',
      url: '/api/servers/register',
      headers: { ...FORM, ...admin },
      payload: new URLSearchParams({
        name: s.server_name,
        description: s.description,
        path: s.path,
        proxy_pass_url: `http://127.0.0.1:9${s.path}`,
        tags: s.tags.join(','),
        tool_list_json: JSON.stringify(s.tools),
      }).toString(),
    });
    if (r.statusCode !== 201) throw new Error(`register ${s.path}: ${r.statusCode} ${r.body}`);
  }
  if (only?.servers) return;
  for (const a of entities.agents) {
    const r = await app.inject({
      method: 'POST',
      url: '/api/agents/register',
      headers: admin,
      payload: { ...a, url: `https://agents.example.org${a.path}`, visibility: 'public' },
    });
    if (r.statusCode !== 201) throw new Error(`register ${a.path}: ${r.statusCode} ${r.body}`);
  }
  for (const k of entities.skills) {
    const r = await app.inject({
      method: 'POST',
      url: '/api/skills',
      headers: admin,
      payload: { name: k.name, description: k.description, tags: k.tags, skill_md_url: skillUrl(k.name) },
    });
    if (r.statusCode !== 201) throw new Error(`register skill ${k.name}: ${r.statusCode} ${r.body}`);
  }
}

/** One merged ranking from a search answer: every kind together, by relevance_score. */
export function rankedIds(body: {
  servers: { path: string; relevance_score: number }[];
  tools: { server_path: string; tool_name: string; relevance_score: number }[];
  agents: { path: string; relevance_score: number }[];
  skills: { path: string; relevance_score: number }[];
}): string[] {
  const all = [
    ...body.servers.map((s) => ({ id: `mcp_server:${s.path}`, score: s.relevance_score })),
    ...body.tools.map((t) => ({ id: `tool:${t.server_path}#${t.tool_name}`, score: t.relevance_score })),
    ...body.agents.map((a) => ({ id: `a2a_agent:${a.path}`, score: a.relevance_score })),
    ...body.skills.map((k) => ({ id: `skill:${k.path}`, score: k.relevance_score })),
  ];
  all.sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
  return all.map((x) => x.id);
}

export function ndcgAt(ranked: string[], rel: Record<string, number>, k = 10): number {
  const gain = (g: number) => 2 ** g - 1;
  let dcg = 0;
  ranked.slice(0, k).forEach((id, i) => {
    dcg += gain(rel[id] ?? 0) / Math.log2(i + 2);
  });
  const ideal = Object.values(rel)
    .sort((a, b) => b - a)
    .slice(0, k);
  let idcg = 0;
  ideal.forEach((g, i) => {
    idcg += gain(g) / Math.log2(i + 2);
  });
  return idcg ? dcg / idcg : 0;
}

export function mrr(ranked: string[], rel: Record<string, number>): number {
  const i = ranked.findIndex((id) => (rel[id] ?? 0) > 0);
  return i < 0 ? 0 : 1 / (i + 1);
}

export function recallAt(ranked: string[], rel: Record<string, number>, k = 10): number {
  const wanted = Object.keys(rel).filter((id) => rel[id]! > 0);
  if (!wanted.length) return 0;
  const top = new Set(ranked.slice(0, k));
  return wanted.filter((id) => top.has(id)).length / wanted.length;
}

export interface CategoryScore {
  category: string;
  queries: number;
  ndcg10: number;
  mrr: number;
  recall10: number;
  /** no_answer only: share of queries with no result above the floor. */
  empty?: number;
}

/** Scores every query with `search` (the ranked ids it returns) per category and overall (answerable queries). */
export async function evaluate(search: (q: string) => Promise<string[]>): Promise<{
  rows: CategoryScore[];
  misses: { query: string; category: string; ndcg: number; top: string[] }[];
}> {
  const per = new Map<string, { n: number; ndcg: number; mrr: number; recall: number; empty: number }>();
  const misses: { query: string; category: string; ndcg: number; top: string[] }[] = [];
  const add = (cat: string, v: { ndcg: number; mrr: number; recall: number; empty: number }) => {
    const p = per.get(cat) ?? { n: 0, ndcg: 0, mrr: 0, recall: 0, empty: 0 };
    p.n++;
    p.ndcg += v.ndcg;
    p.mrr += v.mrr;
    p.recall += v.recall;
    p.empty += v.empty;
    per.set(cat, p);
  };
  for (const q of queries) {
    const ranked = await search(q.query);
    if (q.category === 'no_answer') {
      add('no_answer', { ndcg: 0, mrr: 0, recall: 0, empty: ranked.length === 0 ? 1 : 0 });
      if (ranked.length) misses.push({ query: q.query, category: q.category, ndcg: 0, top: ranked.slice(0, 3) });
      continue;
    }
    const v = { ndcg: ndcgAt(ranked, q.relevant), mrr: mrr(ranked, q.relevant), recall: recallAt(ranked, q.relevant) };
    add(q.category, { ...v, empty: 0 });
    add('overall', { ...v, empty: 0 });
    if (v.ndcg < 0.9) misses.push({ query: q.query, category: q.category, ndcg: v.ndcg, top: ranked.slice(0, 5) });
  }
  const rows: CategoryScore[] = [...per].map(([category, p]) => ({
    category,
    queries: p.n,
    ndcg10: p.ndcg / p.n,
    mrr: p.mrr / p.n,
    recall10: p.recall / p.n,
    ...(category === 'no_answer' ? { empty: p.empty / p.n } : {}),
  }));
  return { rows, misses };
}

export function table(rows: CategoryScore[]): string {
  const f = (x: number) => x.toFixed(3);
  return rows
    .map(
      (r) =>
        `${r.category.padEnd(13)} n=${String(r.queries).padStart(2)}  ` +
        (r.empty !== undefined
          ? `empty above floor ${(r.empty * 100).toFixed(0)} %`
          : `NDCG@10 ${f(r.ndcg10)}  MRR ${f(r.mrr)}  Recall@10 ${f(r.recall10)}`),
    )
    .join('\n');
}
