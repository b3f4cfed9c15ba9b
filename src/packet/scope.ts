/**
 * Scope guards of the packet stage: the checks that keep hidden, future-era, denied and out-of-prefix lore
 * out of a built packet (docs/RETRIEVE.md, "Every lore ref that reaches the output ... is checked"), and
 * the coded refusals the builder raises. Every function is pure over the compiled policy and the index.
 */
import { LoretraceError } from '../errors.js';
import type { VaultIndex } from '../types.js';
import { isUnderPrefix, parseRef } from '../refs/ref.js';
import { checkPath, scopeFolderNotes } from '../policy/compile.js';
import type { CompiledPolicy } from '../policy/types.js';
import { traceNotePath } from '../excerpts/trace.js';
import { sectionOverlapping, sectionsOf } from '../policy/sections.js';
import type { ResearchTraceEntry, ResponderPacket, SourceExcerpt, ValidationIssue } from '../contracts/types.js';
import { hiddenTextIn, rawNumericStateIn } from '../contracts/rules.js';

/** Line breaks other than LF: inside an excerpt they would start a prompt line the renderer cannot indent. */
const OTHER_LINE_BREAK = /[\r\v\f\x1c-\x1e\x85\u2028\u2029]/;

/**
 * A coded refusal of the builder: a LoretraceError naming the file and JSON pointer, with the validator
 * issues (when any) in `details.data.errors`. Exit code 1 (invalid input) unless 2 (usage) is given.
 */
export function refuse(code: string, message: string, file: string, pointer: string | undefined, errors?: ValidationIssue[], exitCode: 1 | 2 = 1): LoretraceError {
  return new LoretraceError(code, message, {
    file,
    ...(pointer !== undefined ? { pointer } : {}),
    ...(errors ? { data: { errors } } : {}),
  }, exitCode);
}

/** The first three validator issues as one message part (`pointer [rule] message; …; and N more`). */
export function summarizeErrors(errors: readonly ValidationIssue[]): string {
  const shown = errors.slice(0, 3).map((e) => `${e.pointer || '/'} [${e.rule}] ${e.message}`);
  return shown.join('; ') + (errors.length > 3 ? `; and ${errors.length - 3} more` : '');
}

/** `Namespace:` prefix that is not a URL scheme (`https://`). */
const NAMESPACED = /^([A-Za-z0-9][A-Za-z0-9_.-]*):(?!\/\/)/;

/**
 * Is `sourceRef` a lore ref? Yes when it starts with `<namespace>:`. A ref with another namespace is
 * returned as `foreign` (it cannot be checked against this vault, so it may not reach the packet).
 */
export function loreKind(sourceRef: string, namespace: string): 'lore' | 'foreign' | 'other' {
  const m = NAMESPACED.exec(sourceRef);
  if (!m) return 'other';
  return m[1] === namespace ? 'lore' : 'foreign';
}

/**
 * The parts of a source_ref: Ghostlight joins several sources with `"; "`
 * (`AetheriaLore:…/Aya Collective.md; agents.sella_ren.memories.memory-care-is-capacity`); any `;` splits
 * (white space after it belongs to the separator). Each part is classified by {@link loreKind} after
 * NFKC, dropping format characters (zero-width, bidi) and trimming, so `" FixtureLore:…"` or
 * `"\u200bFixtureLore:…"` is still a lore part (and then fails to parse as a ref: refused, never kept as
 * non-lore). The excerpt is `foreign` when any part is, else `lore` when any part is. `lore` lists the
 * lore parts as written; `other` the remaining parts.
 */
export function sourceParts(sourceRef: string, namespace: string): { kind: 'lore' | 'foreign' | 'other'; lore: string[]; other: string[] } {
  const parts = sourceRef.split(/;[ \t]*/);
  const kinds = parts.map((p) => loreKind(p.normalize('NFKC').replace(/\p{Cf}/gu, '').trim(), namespace));
  const kind = kinds.includes('foreign') ? 'foreign' : kinds.includes('lore') ? 'lore' : 'other';
  return { kind, lore: parts.filter((_, i) => kinds[i] === 'lore'), other: parts.filter((_, i) => kinds[i] === 'other') };
}

/**
 * The vault path a non-namespaced source part names, or null. The part is read as a vault path: its
 * `#fragment` dropped, NFC, a leading `<namespace>/` dropped (verify-trace tolerates that form too). It
 * names lore when it is a note of the snapshot or lies under a hidden rule's prefix, compared ignoring
 * case (Obsidian resolves names case-insensitively). `World/Pre-Elysium/Author Notes/Brinefall Truth.md`
 * in a draft's source_ref is a hidden ref even without `FixtureLore:` in front.
 */
export function bareVaultPath(part: string, compiled: CompiledPolicy, namespace: string, notesByLower: ReadonlyMap<string, string>): { path: string; note: boolean; hiddenBy?: string } | null {
  let path = part.trim().normalize('NFC');
  const hash = path.indexOf('#');
  if (hash >= 0) path = path.slice(0, hash);
  if (path.startsWith(`${namespace}/`)) path = path.slice(namespace.length + 1);
  path = path.replace(/^\.\//, '');
  if (path === '') return null;
  const note = compiled.notes.has(path) ? path : notesByLower.get(path.toLowerCase());
  if (note !== undefined) return { path: note, note: true };
  const lower = path.toLowerCase();
  const folder = lower.endsWith('/') ? lower : `${lower}/`;
  const rule = compiled.hidden.find((h) => isUnderPrefix(lower, h.prefix.toLowerCase()) || isUnderPrefix(folder, h.prefix.toLowerCase()));
  return rule ? { path, note: false, hiddenBy: `${rule.prefix}, ${rule.pointer}` } : null;
}

/** Refuse (`hidden_ref_in_output`) a string the builder would write when it contains hidden text. */
export function assertNoHiddenText(text: string, omittedRefs: readonly string[], file: string, pointer: string, what: string): void {
  const found = hiddenTextIn(text, omittedRefs);
  if (found !== null) {
    throw refuse(
      'hidden_ref_in_output',
      `${file}: ${pointer} (${what}) contains ${found}; expected no hidden_context_audit.omitted_context_refs entry and no raw-state marker (compared ignoring case, white space runs, format characters and compatibility forms)`,
      file,
      pointer,
    );
  }
}

/**
 * Check that a lore ref may reach a packet: it parses, lies under an allowed prefix (whole segments),
 * and the compiled policy's path check passes (not hidden, not future-era, not denied). With `folderOk`
 * (allowed_scope entries) a folder ref `Namespace:folder/` passes when compilePolicy would make start
 * points of it ({@link scopeFolderNotes}). Throws `ref_out_of_scope` naming the pointer otherwise.
 */
export function assertInScope(ref: string, compiled: CompiledPolicy, namespace: string, file: string, pointer: string, declared: readonly string[], folderOk = false): void {
  let path: string;
  let folder = false;
  try {
    const parsed = parseRef(ref, { namespace, label: pointer });
    path = parsed.path;
    folder = folderOk && parsed.is_prefix;
  } catch (e) {
    throw refuse('ref_out_of_scope', `${file}: ${pointer} ${JSON.stringify(ref)} is not a ref of vault ${namespace}: ${(e as Error).message}`, file, pointer);
  }
  if (!compiled.allowed_prefixes.some((p) => isUnderPrefix(path, p))) {
    throw refuse(
      'ref_out_of_scope',
      `${file}: ${pointer} ${JSON.stringify(ref)} is outside allowed_prefixes (${declared.join(', ')})`,
      file,
      pointer,
    );
  }
  const check = folder ? scopeFolderNotes(compiled, path) : checkPath(compiled, path);
  if (!check.ok) {
    throw refuse('ref_out_of_scope', `${file}: ${pointer} ${JSON.stringify(ref)} may not reach a packet: ${check.reason} (${check.detail})`, file, pointer);
  }
}

/**
 * Why a traversal excerpt may not reach the packet even though its note may be consulted, or null:
 * its lines overlap a hidden section, or a link on its lines points into one (its fragment names the
 * hidden heading), or a link on its lines resolves to a note the policy hides (`hidden_ref`) — the link text would name
 * hidden lore —, or its text (or its trace entry's `used_for`, which quotes the link that reached it)
 * contains an entry of `hidden_context_audit.omitted_context_refs` or a raw-state marker (the validator's
 * `prompt.hidden_ref` / `prompt.raw_state_marker`, compared in {@link hiddenTextForm}), or its text reads
 * as raw numeric state (`prompt.raw_numeric_state`: `gravity 0.38` would fail the packet), or its text
 * contains a line break other than LF (CR, VT, FF, FS/GS/RS, NEL, U+2028, U+2029: Python's
 * `splitlines()` breaks there, so vault text could start its own prompt line, e.g. a heading).
 */
export function withholdReason(
  ex: SourceExcerpt,
  trace: ResearchTraceEntry | undefined,
  draft: ResponderPacket,
  compiled: CompiledPolicy,
  index: VaultIndex,
): string | null {
  if (trace) {
    const tracePath = traceNotePath(trace.source_path);
    const section = sectionOverlapping(compiled, tracePath, trace.line_start, trace.line_end);
    if (section) return `lines ${trace.line_start}-${trace.line_end} overlap a hidden section (${section.pointer})`;
    for (const link of index.links) {
      if (link.source_path !== tracePath || link.line < trace.line_start || link.line > trace.line_end) continue;
      const r = link.resolution;
      if (r.status !== 'resolved' && r.status !== 'ambiguous' && r.status !== 'broken_fragment') continue;
      const check = checkPath(compiled, r.path);
      if (!check.ok && check.reason === 'hidden_ref') {
        return `line ${link.line} links ${link.raw} to hidden lore (${check.detail})`;
      }
      const into = 'chunk_index' in r && typeof r.chunk_index === 'number' ? sectionsOf(compiled, r.path).find((x) => x.chunks.includes(r.chunk_index as number)) : undefined;
      if (into) return `line ${link.line} links ${link.raw} into a hidden section (${into.pointer})`;
    }
  }
  const omitted = draft.hidden_context_audit.omitted_context_refs;
  const inText = hiddenTextIn(ex.text, omitted);
  if (inText !== null) return `its text contains ${inText}`;
  if (trace) {
    const inUse = hiddenTextIn(trace.used_for, omitted);
    if (inUse !== null) return `its trace entry's used_for ${JSON.stringify(trace.used_for)} contains ${inUse}`;
  }
  const numeric = rawNumericStateIn(ex.text)[0];
  if (numeric) return `its text contains ${JSON.stringify(numeric.text)}, which reads as raw numeric state (the validator's prompt.raw_numeric_state)`;
  const brk = OTHER_LINE_BREAK.exec(ex.text);
  if (brk) {
    return `its text contains U+${(brk[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}, a line break to some readers, which would let lore start a prompt line of its own`;
  }
  return null;
}
