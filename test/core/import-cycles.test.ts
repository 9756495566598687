import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TOP = ['core', 'plugins', 'providers', 'bin', 'scripts', 'bench', 'examples'];

function tsFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name === 'node_modules') continue;
    if (statSync(p).isDirectory()) tsFiles(p, out);
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** Relative imports (type-only ones too: a type cycle still ties two modules' designs together). */
function importsOf(file: string, known: Set<string>): string[] {
  const src = readFileSync(file, 'utf8');
  const deps: string[] = [];
  for (const m of src.matchAll(/^(?:import|export)[^'"]*?from\s+['"](\.[^'"]+)['"]/gm)) {
    const p = resolve(dirname(file), m[1]!);
    if (known.has(p)) deps.push(p);
  }
  return deps;
}

t.test('the source tree has no import cycles', async (t) => {
  const files = TOP.flatMap((d) => tsFiles(join(ROOT, d)));
  const known = new Set(files);
  const graph = new Map(files.map((f) => [f, importsOf(f, known)]));
  const state = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const cycles: string[] = [];
  const visit = (n: string) => {
    state.set(n, 1);
    stack.push(n);
    for (const d of graph.get(n) ?? []) {
      if (state.get(d) === 1)
        cycles.push([...stack.slice(stack.indexOf(d)), d].map((f) => f.slice(ROOT.length)).join(' -> '));
      else if (!state.get(d)) visit(d);
    }
    stack.pop();
    state.set(n, 2);
  };
  for (const f of files) if (!state.get(f)) visit(f);
  t.ok(files.length > 100, `read ${files.length} files`);
  t.same(cycles, [], 'no module imports itself through others');
});
