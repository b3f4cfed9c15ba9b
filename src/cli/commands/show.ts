/**
 * `loretrace show <ref or note name> --lore <dir> [--json]`
 *
 * Prints the exact lines a ref names — `#chunkN`, `#Heading text`, `#L10-L20`, `#^block`, or the whole
 * note — read from disk now and checked against the index's sha256 (`stale_file` otherwise, after an
 * automatic refresh this only happens when the file changes mid-command). What names no note of the index
 * is taken as a note's title, alias, file name or extension-less path, with an optional `#fragment`
 * (`resolveRefOrName`, src/refs/names.ts): `show "Harbor Neutrality"`. Human output numbers the lines
 * (with `(title "…")` / `(alias "…")` after the ref when a name found the note); JSON is
 * `{ ref, path, line_start, line_end, text }`. A note over `max_file_bytes` serves only `#L10-L20`, streamed
 * from the file and stopped after the last line (docs/PARSING.md "Big notes"): human output adds a `note:`
 * line saying it is not indexed, JSON adds `not_indexed: { reason: "too_large", bytes }`; any other ref of
 * it is `note_too_large` (exit 1). Exit 1 for `not_found` (its message ends with "did you
 * mean …?" suggestions from titles and aliases when there are any), `ambiguous_ref` (a name several notes
 * have) and `bad_ref`; a note the indexer listed without text answers its `binary_file` (a NUL byte) or
 * `not_utf8` finding (exit 1), never an empty note.
 */
import type { Command } from 'commander';
import { isLoretraceError } from '../../errors.js';
import { assertNoteHasText, overCapNote, readNoteLines, readOverCapLines } from '../../indexer/lookup.js';
import { sliceLines } from '../../notes/lines.js';
import { formatRef, parseRef, type ParsedRef } from '../../refs/ref.js';
import type { VaultIndex } from '../../types.js';
import { resolveRefOrName } from '../../refs/names.js';
import type { CliContext } from '../context.js';
import { action, printJson } from '../context.js';
import { addVaultOptions, openIndex, type VaultCliOptions } from '../vault-options.js';

/**
 * {@link resolveRefOrName}, then refuse a note the indexer listed without text. The check runs first for a
 * ref whose note exists, so `#L1-L3` of a binary note names the NUL byte rather than "has 0 lines".
 * @throws LoretraceError `binary_file`, `not_utf8` ({@link assertNoteHasText}), and resolveRefOrName's errors.
 */
function resolveNoteWithText(index: VaultIndex, ref: string): ReturnType<typeof resolveRefOrName> {
  let resolved: ReturnType<typeof resolveRefOrName>;
  try {
    resolved = resolveRefOrName(index, ref);
  } catch (e) {
    // resolveRef refuses a textless note naming the canonical ref; the message names the ref as typed.
    if (isLoretraceError(e) && (e.code === 'binary_file' || e.code === 'not_utf8') && e.details.file !== undefined) assertNoteHasText(index, e.details.file, ref);
    const parsed = parsedOrNull(index, ref);
    if (parsed !== null) assertNoteHasText(index, parsed.path, ref);
    throw e;
  }
  assertNoteHasText(index, resolved.range.path, ref);
  return resolved;
}

/** `ref` parsed as a ref of this vault, or null when it is not one (a note name, say). */
function parsedOrNull(index: VaultIndex, ref: string): ParsedRef | null {
  try {
    return parseRef(ref, { namespace: index.namespace });
  } catch {
    return null;
  }
}

/** Register `loretrace show` on the program; its action writes to `ctx` and sets `ctx.exitCode`. */
export function register(program: Command, ctx: CliContext): void {
  addVaultOptions(
    program
      .command('show')
      .description('print the exact lines of a lore ref')
      .argument('<ref>', 'Namespace:path.md with optional #chunkN, #Heading, #L10-L20 or #^block; or a note\'s title, alias or file name (same fragments)'),
  ).option('--json', 'print { ref, path, line_start, line_end, text } as JSON').action(action(ctx, async (ref: string, opts: VaultCliOptions) => {
    const index = await openIndex(ctx, opts);
    const { parsed, range: r, named } = resolveNoteWithText(index, ref);
    const canonical = formatRef(index.namespace, r.path, parsed.fragment);
    const big = overCapNote(index, r.path);
    // An over-cap note's range is streamed from disk (lines[0] is line_start); any other note is read whole.
    const lines = big ? await readOverCapLines(index, r.path, r.line_start, r.line_end, canonical) : await readNoteLines(index, r.path);
    const first = big ? r.line_start : 1;
    const text = r.line_end >= r.line_start ? sliceLines(lines, r.line_start - first + 1, r.line_end - first + 1) : '';
    if (opts.json) {
      printJson(ctx, { ref: canonical, path: r.path, line_start: r.line_start, line_end: r.line_end, text, ...(big ? { not_indexed: { reason: big.reason, bytes: big.bytes } } : {}) });
      return 0;
    }
    const width = String(Math.max(r.line_end, 1)).length;
    const by = named === null || named.by === 'path' ? '' : `, ${named.by === 'alias' ? 'alias' : named.by === 'title' ? 'title' : 'file name'} ${JSON.stringify(named.matched)}`;
    let out = `${canonical}  (lines ${r.line_start}-${r.line_end}${by})\n`;
    if (big) out += `note: ${r.path} is ${big.bytes} bytes, over max_file_bytes: not indexed (no chunk or heading refs); these lines are read from the file\n`;
    // A blank line is printed as `2 │` with no trailing space (a space after the bar would be invisible text).
    for (let n = r.line_start; n <= r.line_end; n++) out += `${String(n).padStart(width)} │${lines[n - first] === '' ? '' : ` ${lines[n - first]}`}\n`;
    ctx.stdout(out);
    return 0;
  }));
}
