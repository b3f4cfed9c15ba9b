/**
 * `loretrace search <query...> --lore <dir> [--k 10] [--prefix P]... [--class C]... [--json]`
 *
 * Refreshes the index if the vault changed, then runs {@link search}. JSON output is exactly
 * `{ "snapshot_id", "results": [ { "ref", "path", "chunk_index", "line_start", "line_end",
 * "heading_path", "score", "text" } ], "skipped": [ { "path", "reason": "too_large", "bytes" } ] }`, where
 * `skipped` lists the notes (under the `--prefix`es, when given) over `max_file_bytes` that were not
 * searched, sorted by path (`overCapNotes`, src/indexer/lookup.ts); human output names them in a final
 * `Not searched (over max_file_bytes, not indexed): …` line. A `--prefix` or `--class` that matches no note of the vault is
 * named: in the "No results" line when nothing was found, else (and always with `--json`) as a
 * `loretrace: warning: …` line on stderr. Exit 0 (also with no results), 2 on usage errors: a `--prefix`
 * that the ref grammar refuses (`bad_option`, see {@link prefixPath}) or an empty `--class` (`usage`).
 */
import type { Command } from 'commander';
import { search, type SearchHit } from '../../search/search.js';
import { overCapNotes, type OverCapNote } from '../../indexer/lookup.js';
import type { CliContext } from '../context.js';
import { action, printJson } from '../context.js';
import { LoretraceError, isLoretraceError } from '../../errors.js';
import { isUnderPrefix, parseRef } from '../../refs/ref.js';
import type { VaultIndex } from '../../types.js';
import { addVaultOptions, openIndex, type VaultCliOptions } from '../vault-options.js';
import { positiveInt } from './index-cmd.js';

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
    const path = prefixPath(index.namespace, p);
    if (!index.notes.some((n) => isUnderPrefix(n.path, path))) out.push(`no note under ${JSON.stringify(p)}`);
  }
  for (const c of classes) if (!index.notes.some((n) => n.classes.includes(c))) out.push(`no note has class ${JSON.stringify(c)}`);
  return out;
}

/**
 * The vault path of a `--prefix` value, read with the ref grammar (src/refs/ref.ts `parseRef`): a vault
 * path or folder (`World/Politics/`, `Edge`), optionally with this vault's namespace
 * (`FixtureLore:Edge/`). Returned NFC, without the namespace.
 *
 * @throws LoretraceError `bad_option` (exit 2) naming the prefix and the ref grammar's reason for everything
 *   parseRef refuses (`../`, `/Edge`, `Other:Edge/`, `%45dge/`, `Edge/../World/`, an empty value, …) and
 *   for a fragment (`Edge/Links.md#chunk0`): a typo must not silently filter every hit away.
 */
export function prefixPath(namespace: string, value: string): string {
  let parsed;
  try {
    parsed = parseRef(value, { namespace, label: '--prefix' });
  } catch (e) {
    // A bad option value, not a ref asked about: `bad_option`, exit 2, as every other bad option value
    // (README "Exit codes": one error code, one exit code); `show`/`links` answer a bad ref argument `bad_ref`, exit 1.
    if (isLoretraceError(e)) throw new LoretraceError(e.code === 'bad_ref' ? 'bad_option' : e.code, e.message, e.details, 2);
    throw e;
  }
  if (parsed.fragment !== null) {
    throw new LoretraceError('bad_option', `--prefix ${JSON.stringify(value)} is not a vault path prefix: it has a fragment after "#"`, { expected: 'a folder (World/Politics/) or note path, without #fragment', data: { ref: value } }, 2);
  }
  return parsed.path;
}

/**
 * The line naming the notes over `max_file_bytes` that were not searched (`Not searched (over max_file_bytes,
 * not indexed): Big.md (1200 bytes), …`), or '' when there are none.
 */
function skippedNotesLine(skipped: readonly OverCapNote[]): string {
  if (skipped.length === 0) return '';
  return `Not searched (over max_file_bytes, not indexed): ${skipped.map((n) => `${n.path} (${n.bytes} bytes)`).join(', ')}\n`;
}

/** Check `--class` values before any work: an empty class is a usage error (exit 2), never "no hits". */
function checkClasses(classes: readonly string[]): void {
  for (const c of classes) {
    if (c.trim() === '') {
      throw new LoretraceError('usage', `option --class must be a class name, not an empty value (got ${JSON.stringify(c)})`, { expected: 'a target class such as edge or politics' }, 2);
    }
  }
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
  ).option('--json', 'print { snapshot_id, results, skipped } as JSON').action(action(ctx, async (words: string[], opts: SearchCliOptions) => {
    const k = positiveInt('--k', opts.k);
    checkClasses(opts.class);
    // The proxy refuses an empty query (bad_request); the CLI says the same, as a usage error, never "No results".
    if (words.join(' ').trim() === '') throw new LoretraceError('usage', `the query must be non-empty search words (got ${JSON.stringify(words.join(' '))})`, { expected: 'search words, e.g. loretrace search "rescue ledger"' }, 2);
    const index = await openIndex(ctx, opts);
    const prefixes = opts.prefix.map((p) => prefixPath(index.namespace, p));
    const query = words.join(' ');
    const results = search(index, query, { k, prefixes, classes: opts.class });
    const unmatched = unmatchedFilters(index, opts.prefix, opts.class);
    if (opts.json || results.length > 0) for (const u of unmatched) ctx.stderr(`loretrace: warning: ${u}\n`);
    const skipped = overCapNotes(index).filter((n) => prefixes.length === 0 || prefixes.some((p) => isUnderPrefix(n.path, p)));
    if (opts.json) {
      printJson(ctx, { snapshot_id: index.snapshot_id, results, skipped: skipped.map((n) => ({ path: n.path, reason: n.reason, bytes: n.bytes })) });
      return 0;
    }
    const skippedLine = skippedNotesLine(skipped);
    if (results.length === 0) {
      ctx.stdout(`No results for "${query}" in ${index.namespace}${unmatched.length ? `: ${unmatched.join('; ')}` : ''}.\n${skippedLine}`);
      return 0;
    }
    let out = '';
    results.forEach((h, i) => {
      out += `${i + 1}. ${h.ref}  (score ${h.score})\n`;
      out += `   lines ${h.line_start}-${h.line_end} · ${hitHeading(h)}\n`;
      out += previewLines(h);
    });
    ctx.stdout(out + skippedLine);
    return 0;
  }));
}

/**
 * The preview under a hit: its first {@link PREVIEW_LINES} non-blank lines, each with its 1-based line number in
 * the note as `show` prints it (`3 │ text`; numbers right-aligned to the range's last), so a blank line left out
 * shows as a gap in the numbers; a line over 100 characters is cut with `…`. When non-blank lines of the range
 * are left out, a last line says how many and where to read them (`loretrace show <ref>`).
 */
function previewLines(h: Pick<SearchHit, 'text' | 'line_start' | 'line_end' | 'ref'>): string {
  const width = String(h.line_end).length;
  const lines = h.text.split('\n').map((text, i) => ({ n: h.line_start + i, text })).filter((l) => l.text.trim() !== '');
  let out = '';
  for (const l of lines.slice(0, PREVIEW_LINES)) out += `   ${String(l.n).padStart(width)} │ ${l.text.length > 100 ? `${l.text.slice(0, 99)}…` : l.text}\n`;
  const more = lines.length - PREVIEW_LINES;
  if (more > 0) out += `   ${' '.repeat(width)} ⋮ ${more} more non-blank line${more === 1 ? '' : 's'} to line ${h.line_end}: loretrace show ${h.ref}\n`;
  return out;
}

/** Non-blank lines shown under a search hit. */
const PREVIEW_LINES = 3;

/**
 * Where a hit sits in its note, for the human output: its heading path (`Brine › Tides`), or for a chunk
 * before the note's first heading (empty heading path) the note's file name without `.md` and
 * `(introduction)` — `Framgång (introduction)`: the file name is what Obsidian shows at the top of a note
 * (its inline title), and the line would otherwise name nothing.
 */
export function hitHeading(hit: Pick<SearchHit, 'path' | 'heading_path'>): string {
  if (hit.heading_path.length > 0) return hit.heading_path.join(' › ');
  const name = hit.path.slice(hit.path.lastIndexOf('/') + 1).replace(/\.md$/i, '');
  return `${name} (introduction)`;
}
