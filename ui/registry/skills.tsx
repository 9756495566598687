import DOMPurify from 'dompurify';
import { marked } from 'marked';
import { useMemo, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorBox, Loading, PageHeader, Shield, Tags, useApi } from '../components/common.tsx';
import { href } from '../router.ts';
import type { Skill } from './types.ts';

/**
 * SKILL.md comes from a URL its publisher chose, so it is untrusted: marked turns it into HTML (GFM tables
 * and lists included), then DOMPurify removes scripts, event handlers, javascript: URLs, forms and frames.
 * Two small, widely used libraries (about 20 KB gzipped together) instead of one renderer that would have to
 * be both correct Markdown and a sanitiser. Links open in a new tab without access to this page.
 */
export function renderMarkdown(md: string): string {
  const html = marked.parse(md.replace(/^---\n[\s\S]*?\n---\n/, ''), { async: false, gfm: true }) as string;
  const clean = DOMPurify.sanitize(html, {
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'iframe', 'object', 'embed'],
    FORBID_ATTR: ['style'],
  });
  const doc = new DOMParser().parseFromString(`<div>${clean}</div>`, 'text/html');
  // The page has its own h1 and an h2 above the document: its headings move down two levels.
  for (const h of doc.querySelectorAll('h1, h2, h3, h4, h5, h6')) {
    const level = Math.min(6, Number(h.tagName[1]) + 2);
    const moved = doc.createElement(`h${level}`);
    moved.append(...h.childNodes);
    h.replaceWith(moved);
  }
  // An image without a text alternative is announced by its file name: mark it decorative instead.
  for (const img of doc.querySelectorAll('img:not([alt])')) img.setAttribute('alt', '');
  for (const a of doc.querySelectorAll('a')) {
    a.setAttribute('target', '_blank');
    a.setAttribute('rel', 'noopener noreferrer nofollow');
  }
  return doc.body.firstElementChild?.innerHTML ?? '';
}

export function SkillsPage() {
  const [query, setQuery] = useState('');
  const [r, error] = useApi(
    () => api<{ skills: Skill[]; total: number }>('/api/skills', { query: { query, limit: 1000 } }),
    [query],
  );
  return (
    <section>
      <PageHeader title="Skills" sub={r ? `${r.total} skill(s)` : ' '} />
      <div class="toolbar">
        <label class="sr-only" for="skill-search">
          Search skills
        </label>
        <input
          id="skill-search"
          type="search"
          placeholder="Search skills  ( / )"
          value={query}
          onInput={(e) => setQuery(e.currentTarget.value)}
        />
      </div>
      <ErrorBox error={error} />
      {!r && !error && <Loading what="skills" />}
      {r && (
        <div class="table-wrap">
          <table aria-label="Skills">
            <thead>
              <tr>
                <th scope="col">Skill</th>
                <th scope="col">Status</th>
                <th scope="col">Visibility</th>
                <th scope="col">Tags</th>
                <th scope="col">Stars</th>
              </tr>
            </thead>
            <tbody>
              {r.skills.map((s) => (
                <tr key={s.path}>
                  <td>
                    <a href={href(`/skills/${s.name}`)}>{s.name}</a>{' '}
                    {s.tags.includes('security-pending') && <Shield label="Security scan pending" />}
                    <span class="desc">{s.description}</span>
                  </td>
                  <td>{s.is_enabled ? s.status : `${s.status} (disabled)`}</td>
                  <td>{s.visibility}</td>
                  <td>
                    <Tags tags={s.tags} />
                  </td>
                  <td class="num">{s.num_stars.toFixed(1)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {r.skills.length === 0 && <p class="muted empty">No skills.</p>}
        </div>
      )}
    </section>
  );
}

export function SkillDetailPage(props: { name: string }) {
  const [s, error] = useApi(() => api<Skill>(`/api/skills/${encodeURIComponent(props.name)}`), [props.name]);
  const html = useMemo(() => (s?.skill_md ? renderMarkdown(s.skill_md) : ''), [s?.skill_md]);
  if (error) return <ErrorBox error={error} />;
  if (!s) return <Loading what="skill" />;
  return (
    <section>
      <PageHeader title={s.name} sub={s.description} />
      {s.tags.includes('security-pending') && (
        <p class="alert error">
          <Shield label="Security scan pending" /> Held for security review (security-pending): an admin must review the
          scan findings before it is enabled.
        </p>
      )}
      <div class="card">
        <dl class="facts">
          <dt>Version</dt>
          <dd>{s.version ?? '—'}</dd>
          <dt>Status</dt>
          <dd>
            {s.status}, {s.is_enabled ? 'enabled' : 'disabled'}, {s.visibility}
          </dd>
          <dt>Tags</dt>
          <dd>
            <Tags tags={s.tags} />
          </dd>
          <dt>Allowed tools</dt>
          <dd>{s.allowed_tools.join(', ') || '—'}</dd>
          <dt>Source</dt>
          <dd class="mono">{s.skill_md_url}</dd>
        </dl>
      </div>
      <h2>SKILL.md</h2>
      {/* Sanitised by DOMPurify in renderMarkdown: the only HTML the console injects. */}
      <article class="card markdown" dangerouslySetInnerHTML={{ __html: html }} />
    </section>
  );
}
