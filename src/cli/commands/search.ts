/**
 * `loretrace search <query...> --lore <dir> [--k 10] [--prefix P]... [--class C]... [--json]`
 *
 * Refreshes the index if the vault changed, then runs {@link search}. JSON output is exactly
 * `{ "snapshot_id", "results": [ { "ref", "path", "chunk_index", "line_start", "line_end",
 * "heading_path", "score", "text" } ] }`. Exit 0 (also with no results), 2 on usage errors.
 */
import type { Command } from 'commander';
import { search } from '../../search/search.js';
import type { CliContext } from '../context.js';
import { action, printJson } from '../context.js';
import { addVaultOptions, openIndex, positiveInt, stripNamespace, type VaultCliOptions } from './index-cmd.js';

interface SearchCliOptions extends VaultCliOptions {
  k: string;
  prefix: string[];
  class: string[];
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

export function register(program: Command, ctx: CliContext): void {
  addVaultOptions(
    program
      .command('search')
      .description('BM25 search over the chunks of a vault')
      .argument('<query...>', 'search words (joined with spaces)')
      .option('--k <n>', 'number of results', '10')
      .option('--prefix <path>', 'only notes under this vault path prefix (whole segments; repeatable)', collect, [])
      .option('--class <class>', 'only notes with this target class (repeatable)', collect, []),
  ).action(action(ctx, async (words: string[], opts: SearchCliOptions) => {
    const k = positiveInt('--k', opts.k);
    const index = await openIndex(ctx, opts);
    const query = words.join(' ');
    const results = search(index, query, {
      k,
      prefixes: opts.prefix.map((p) => stripNamespace(index, p)),
      classes: opts.class,
    });
    if (opts.json) {
      printJson(ctx, { snapshot_id: index.snapshot_id, results });
      return 0;
    }
    if (results.length === 0) {
      ctx.stdout(`No results for "${query}" in ${index.namespace}.\n`);
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
