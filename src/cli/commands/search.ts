/**
 * `loretrace search <query...> --lore <dir> [--k 10] [--prefix P]... [--class C]... [--json]`
 *
 * Refreshes the index if the vault changed, then runs {@link search}. JSON output is exactly
 * `{ "snapshot_id", "results": [ { "ref", "path", "chunk_index", "line_start", "line_end",
 * "heading_path", "score", "text" } ] }`. A `--prefix` or `--class` that matches no note of the vault is
 * named: in the "No results" line when nothing was found, else (and always with `--json`) as a
 * `loretrace: warning: …` line on stderr. Exit 0 (also with no results), 2 on usage errors.
 */
import type { Command } from 'commander';
import { search } from '../../search/search.js';
import type { CliContext } from '../context.js';
import { action, printJson } from '../context.js';
import { isUnderPrefix } from '../../refs/ref.js';
import type { VaultIndex } from '../../types.js';
import { addVaultOptions, openIndex, type VaultCliOptions } from '../vault-options.js';
import { positiveInt, stripNamespace } from './index-cmd.js';

interface SearchCliOptions extends VaultCliOptions {
  k: string;
  prefix: string[];
  class: string[];
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

/**
 * The filters that match no note of the vault, in words: `no note has class "x"`, `no note under "P/"`
 * (prefixes as the user typed them; whole-segment matching as in `search`).
 */
export function unmatchedFilters(index: VaultIndex, prefixes: readonly string[], classes: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of prefixes) {
    const path = stripNamespace(index, p);
    if (path !== '' && !index.notes.some((n) => isUnderPrefix(n.path, path))) out.push(`no note under ${JSON.stringify(p)}`);
  }
  for (const c of classes) if (!index.notes.some((n) => n.classes.includes(c))) out.push(`no note has class ${JSON.stringify(c)}`);
  return out;
}

/** Register `loretrace search` on the program; its action writes to `ctx` and sets `ctx.exitCode`. */
export function register(program: Command, ctx: CliContext): void {
  addVaultOptions(
    program
      .command('search')
      .description('search the chunks of a vault (BM25 over title, aliases, headings and text)')
      .argument('<query...>', 'search words (joined with spaces)')
      .option('--k <n>', 'number of results', '10')
      .option('--prefix <path>', 'only notes under this vault path prefix (whole segments; repeatable)', collect, [])
      .option('--class <class>', 'only notes with this target class (repeatable)', collect, []),
  ).option('--json', 'print { snapshot_id, results } as JSON').action(action(ctx, async (words: string[], opts: SearchCliOptions) => {
    const k = positiveInt('--k', opts.k);
    const index = await openIndex(ctx, opts);
    const query = words.join(' ');
    const results = search(index, query, {
      k,
      prefixes: opts.prefix.map((p) => stripNamespace(index, p)),
      classes: opts.class,
    });
    const unmatched = unmatchedFilters(index, opts.prefix, opts.class);
    if (opts.json || results.length > 0) for (const u of unmatched) ctx.stderr(`loretrace: warning: ${u}\n`);
    if (opts.json) {
      printJson(ctx, { snapshot_id: index.snapshot_id, results });
      return 0;
    }
    if (results.length === 0) {
      ctx.stdout(`No results for "${query}" in ${index.namespace}${unmatched.length ? `: ${unmatched.join('; ')}` : ''}.\n`);
      return 0;
    }
    let out = '';
    results.forEach((h, i) => {
      out += `${i + 1}. ${h.ref}  (score ${h.score})\n`;
      out += `   lines ${h.line_start}-${h.line_end}${h.heading_path.length ? ` · ${h.heading_path.join(' › ')}` : ''}\n`;
      const preview = h.text.split('\n').filter((l) => l.trim() !== '').slice(0, 3);
      for (const l of preview) out += `   │ ${l.length > 100 ? `${l.slice(0, 99)}…` : l}\n`;
    });
    ctx.stdout(out);
    return 0;
  }));
}
