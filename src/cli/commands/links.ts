/**
 * `loretrace links <ref> --lore <dir> [--json]`
 *
 * Outgoing links of a note (or of the lines a fragment names) and incoming links (backlinks) to it, with
 * syntax and position classes, lines, resolution and the target classes of the other end.
 * The note is found as `show` finds it: a ref, else a note's title, alias, file name or extension-less path
 * (`links "Harbor Neutrality"`), with "did you mean …?" suggestions when nothing matches.
 * JSON: `{ ref, path, classes, outgoing: [...], incoming: [...] }`. Exit 1 for `not_found`, `ambiguous_ref`,
 * `bad_ref` and `note_too_large` (a note over max_file_bytes: its links are not known).
 */
import type { Command } from 'commander';
import { LoretraceError, isLoretraceError } from '../../errors.js';
import { backlinks, getNote, notePathOnDisk, outgoingLinks, overCapNote } from '../../indexer/lookup.js';
import { formatRef, parseRef } from '../../refs/ref.js';
import type { ParsedRef } from '../../refs/grammar.js';
import type { ResolvedRef } from '../../refs/ref.js';
import { resolveRefOrName } from '../../refs/names.js';
import type { LinkRecord, LinkResolution, VaultIndex, VaultPath } from '../../types.js';
import type { CliContext } from '../context.js';
import { action, printJson } from '../context.js';
import { addVaultOptions, openIndex, type VaultCliOptions } from '../vault-options.js';

function targetOf(r: LinkResolution): string {
  switch (r.status) {
    case 'resolved': return r.path;
    case 'ambiguous': return `${r.path} (ambiguous: ${r.candidates.join(', ')})`;
    case 'broken_fragment': return `${r.path} (broken fragment #${r.fragment})`;
    case 'external': return r.url;
    default: return r.status;
  }
}

function classesOf(index: VaultIndex, r: LinkResolution): string[] {
  return 'path' in r ? getNote(index, r.path)?.classes ?? [] : [];
}

/**
 * The note `links` reports on, found as `show` finds it ({@link resolveRefOrName}: a ref, else a title, alias,
 * file name or extension-less path, with "did you mean …?" suggestions when nothing matches). A note over
 * `max_file_bytes` was never parsed, so none of its links are known: `note_too_large` for any ref of it. A
 * note kept without text answers its whole-note ref (no outgoing links; its backlinks) and refuses a fragment.
 * @throws LoretraceError `not_found`, `ambiguous_ref`, `bad_ref` (as `resolveRefOrName`), `note_too_large`,
 *   `binary_file` / `not_utf8` for a fragment of a textless note (exit 1).
 */
function resolveLinksRef(index: VaultIndex, input: string): { parsed: ParsedRef; range: ResolvedRef } {
  const tooLarge = (path: string, bytes: number) => new LoretraceError('note_too_large', `${index.namespace}:${path} is ${bytes} bytes, over max_file_bytes, so it is not indexed and its links are not known; read its lines with loretrace show "<note>#L1-L50"`, { file: path });
  let found;
  try {
    found = resolveRefOrName(index, input);
  } catch (e) {
    const big = isLoretraceError(e) && e.code === 'note_too_large' && typeof e.details.file === 'string' ? overCapNote(index, e.details.file) : undefined;
    if (big) throw tooLarge(big.path, big.bytes);
    // A note kept without text (binary, not UTF-8) has no outgoing links but may be linked to: its whole-note
    // ref lists its backlinks; a fragment of it names lines it does not have (resolveRef's refusal stands).
    if (isLoretraceError(e) && (e.code === 'binary_file' || e.code === 'not_utf8') && typeof e.details.file === 'string' && !input.includes('#')) {
      const path = e.details.file as VaultPath;
      return { parsed: parseRef(formatRef(index.namespace, path, null), { namespace: index.namespace }), range: { path, chunk_index: null, line_start: 1, line_end: 0 } };
    }
    throw e;
  }
  const big = overCapNote(index, found.range.path);
  if (big) throw tooLarge(big.path, big.bytes);
  return { parsed: found.parsed, range: found.range };
}

/** Register `loretrace links` on the program; its action writes to `ctx` and sets `ctx.exitCode`. */
export function register(program: Command, ctx: CliContext): void {
  addVaultOptions(
    program
      .command('links')
      .description('outgoing and incoming links of a note, with classes, lines and resolution')
      .argument('<ref>', 'Namespace:path.md, or a note\'s title, alias or file name, optionally with a fragment to narrow the outgoing links'),
  ).option('--json', 'print { ref, path, classes, outgoing, incoming } as JSON').action(action(ctx, async (ref: string, opts: VaultCliOptions) => {
    const index = await openIndex(ctx, opts);
    const { parsed, range: r } = resolveLinksRef(index, ref);
    const note = getNote(index, r.path)!;
    const outgoing = outgoingLinks(index, r.path).filter((l) => parsed.fragment === null || (l.line >= r.line_start && l.line <= r.line_end));
    const incoming = backlinks(index, r.path);
    const out = (l: LinkRecord) => ({
      line: l.line, column: l.column, chunk_index: l.chunk_index, syntax: l.syntax, position: l.position, raw: l.raw,
      target: l.target, fragment: l.fragment, display: l.display, resolution: l.resolution, target_classes: classesOf(index, l.resolution),
    });
    const inc = (l: LinkRecord) => ({
      source_path: notePathOnDisk(index, l.source_path), line: l.line, column: l.column, chunk_index: l.chunk_index, syntax: l.syntax, position: l.position,
      raw: l.raw, fragment: l.fragment, resolution: l.resolution, source_classes: getNote(index, l.source_path)?.classes ?? [],
    });
    const canonical = formatRef(index.namespace, r.path, parsed.fragment);
    if (opts.json) {
      printJson(ctx, { ref: canonical, path: r.path, classes: note.classes, outgoing: outgoing.map(out), incoming: incoming.map(inc) });
      return 0;
    }
    let text = `${canonical}\n  classes: ${note.classes.join(', ') || '(none)'}\n\nOutgoing (${outgoing.length}):\n`;
    for (const l of outgoing) {
      const cls = classesOf(index, l.resolution);
      text += `  L${l.line}:${l.column}  ${l.syntax} ${l.position}  ${l.raw} → ${targetOf(l.resolution)}${cls.length ? `  [${cls.join(', ')}]` : ''}\n`;
    }
    text += `\nIncoming (${incoming.length}):\n`;
    for (const l of incoming) text += `  ${l.source_path} L${l.line}:${l.column}  ${l.syntax} ${l.position}  ${l.raw}\n`;
    ctx.stdout(text);
    return 0;
  }));
}
