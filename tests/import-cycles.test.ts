/**
 * The pipeline's modules import each other in one direction only (docs/ARCHITECTURE.md): a cycle between
 * two modules of src/ means a stage depends on a later one. This test reads every import and re-export
 * specifier of src/**\/*.ts (type-only imports included: they couple the modules just the same), builds
 * the module graph and fails naming every cycle it finds (strongly connected components, Tarjan).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importCycles, moduleSpecifiers } from './helpers/import-graph.js';

const SRC = resolve(import.meta.dirname, '..', 'src');

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (entry.name.endsWith('.ts')) out.push(full);
  }
  return out.sort();
}

/** Module graph of src/: vault-relative module name → the src/ modules it imports. */
function srcGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const from = relative(SRC, file);
    const deps: string[] = [];
    for (const spec of moduleSpecifiers(readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      deps.push(relative(SRC, resolve(dirname(file), spec.replace(/\.js$/, '.ts'))));
    }
    graph.set(from, deps);
  }
  return graph;
}

describe('moduleSpecifiers', () => {
  it('reads static, type-only, re-export, side-effect and dynamic imports, not comments or strings', () => {
    const source = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      "export { c } from './c.js';",
      "export * from './d.js';",
      "import './e.js';",
      "const f = await import('./f.js');",
      'import {',
      '  g,',
      "} from './g.js';",
      "// import { h } from './h.js';",
      "const s = \"from './i.js'\";",
    ].join('\n');
    expect(moduleSpecifiers(source)).toEqual(['./a.js', '../b.js', './c.js', './d.js', './e.js', './f.js', './g.js']);
  });
});

describe('importCycles', () => {
  it('names each cycle once, starting from its smallest module', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['d.ts']],
      ['e.ts', ['a.ts']],
    ]);
    expect(importCycles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts'], ['d.ts']]);
  });

  it('finds no cycle in src/', () => {
    const graph = srcGraph();
    expect(graph.size).toBeGreaterThan(50);
    expect(importCycles(graph)).toEqual([]);
  });
});
