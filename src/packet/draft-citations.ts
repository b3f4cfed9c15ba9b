/**
 * The draft's own lore excerpts as requirements (docs/RETRIEVE.md, "Draft lore excerpts"). A Ghostlight
 * author writes a lore excerpt as a paraphrase and names, in its `source_ref`, the vault notes it comes
 * from (several joined by `;`, a `#Heading` naming that section). In the coordinator lane a paraphrase may
 * not reach the packet (lore there always comes with a runner_captured receipt), but it is the author's
 * declared requirement: so each cited ref is searched for the paraphrase — BM25 over the policy's admitted
 * corpus (the walk's corpus: the notes `checkPath` admits, hidden sections left out), scoped to the cited
 * note and to the lines of the cited section — and the best verbatim line run that supports the paraphrase
 * becomes a *verified excerpt*, whose trace entry's `used_for` names the draft excerpt it verifies.
 *
 * "Supports" is the coordinator lane's one rule for an excerpt serving a requirement
 * ({@link requirementOverlap}: at least MIN_SERVED_TERMS distinct terms of the paraphrase and
 * MIN_SERVED_SHARE of them), applied to a compact excerpt of the cited lines ({@link compactExcerpt}: whole
 * self-contained sentences of one paragraph, lore lines only, wikilinks shown as display text, the trace
 * keeping the exact lines), which must be allowed into the packet ({@link withholdReason}). A cited ref the
 * policy refuses is reported and never read; a cited ref that supports nothing is reported — never
 * silently dropped.
 */
import type { Chunk, VaultIndex, VaultPath } from '../types.js';
import type { CompiledPolicy } from '../policy/types.js';
import type { ResearchTraceEntry, ResponderPacket, SourceExcerpt } from '../contracts/types.js';
import { checkPath } from '../policy/compile.js';
import { sectionsOf, withheldChunks } from '../policy/sections.js';
import { formatRef, isUnderPrefix, parseRef, resolveRef } from '../refs/ref.js';
import { search, searchCorpus } from '../search/search.js';
import type { SearchCorpus } from '../search/search.js';
import { chunksOf, notePathOnDisk, outgoingLinks } from '../indexer/lookup.js';
import { compactExcerpt } from '../excerpts/compact.js';
import { excerptRefId } from '../excerpts/excerpt.js';
import { makeTraceEntry } from '../excerpts/trace.js';
import { hiddenTextIn } from '../contracts/rules.js';
import { requirementOverlap } from './requirements.js';
import { sourceParts, withholdReason } from './scope.js';

/** One vault ref a draft lore excerpt cites: the excerpt (index, pointer, ref_id, paraphrase) and the ref part. */
export interface DraftCitation {
  /** Index of the excerpt in the draft's `visible_context.source_excerpts`. */
  index: number;
  /** `/visible_context/source_excerpts/<index>`. */
  pointer: string;
  ref_id: string;
  /** The paraphrase: the query searched within the cited ref. */
  text: string;
  /** The lore part of the excerpt's `source_ref`, as written (trimmed). */
  ref: string;
}

/** A verified excerpt: the compact line run of the cited ref that supports the paraphrase, with its trace entry. */
export interface VerifiedExcerpt {
  citation: DraftCitation;
  excerpt: SourceExcerpt;
  trace: ResearchTraceEntry;
  /** The note the excerpt comes from (index path) and its chunk. */
  path: VaultPath;
  chunk: Chunk;
  /** Distinct paraphrase terms the excerpt holds, of `wanted`; `needed` is what supporting it takes. */
  shared: number;
  wanted: number;
  needed: number;
}

/** What became of one citation. */
export type CitationOutcome =
  | { kind: 'verified'; verified: VerifiedExcerpt }
  /** The policy refuses the ref (or it is not a note ref of this vault): not read. */
  | { kind: 'refused'; citation: DraftCitation; detail: string }
  /** No line run of the ref supports the paraphrase; `searched` is false when no search was run (the ref names nothing in this snapshot, or the text may not be a query). */
  | { kind: 'unsupported'; citation: DraftCitation; detail: string; searched: boolean };

/**
 * The vault refs the draft's lore excerpts cite, in excerpt order then part order: every part of a
 * `source_ref` that starts with `<namespace>:` ({@link sourceParts}; `;`-joined parts, non-lore parts such
 * as `agents.sella_ren.memories.…` skipped). An excerpt with an empty text cites nothing.
 */
export function draftCitations(draft: ResponderPacket, namespace: string): DraftCitation[] {
  const out: DraftCitation[] = [];
  draft.visible_context.source_excerpts.forEach((ex, index) => {
    const { kind, lore } = sourceParts(ex.source_ref, namespace);
    if (kind !== 'lore' || ex.text.trim() === '') return;
    for (const ref of lore) out.push({ index, pointer: `/visible_context/source_excerpts/${index}`, ref_id: ex.ref_id, text: ex.text, ref: ref.trim() });
  });
  return out;
}

/**
 * The search corpus of the policy: the notes `checkPath` admits, hidden sections' chunks left out — the
 * corpus the walk ranks by (src/traversal/traverse.ts `relevanceTables`), so a verification search's
 * statistics depend on no hidden or out-of-scope text.
 */
export function admittedCorpus(index: VaultIndex, compiled: CompiledPolicy): SearchCorpus {
  return searchCorpus(
    index.notes.filter((n) => checkPath(compiled, n.path).ok).map((n) => n.path),
    withheldChunks(compiled),
  );
}

/** What {@link verifyCitation} needs of the build. */
export interface CitationContext {
  index: VaultIndex;
  compiled: CompiledPolicy;
  draft: ResponderPacket;
  corpus: SearchCorpus;
  /** ref_ids already taken in the packet (kept draft excerpts, earlier verified excerpts); the new one is added. */
  usedIds: Set<string>;
}

/**
 * The cited note and line range of a citation, or why it may not be read: the ref must parse as a note ref
 * of this vault (not a folder), lie under an allowed prefix and pass `checkPath` (not hidden, future-era or
 * denied), and resolve in this snapshot (`resolveRef`: whole note, `#Heading` section with its
 * subsections, `#chunkN`, `#L10-L20`, `#^block`).
 */
function citedRange(ctx: CitationContext, c: DraftCitation): { path: VaultPath; start: number; end: number } | { refused: string } | { unsupported: string } {
  const ns = ctx.index.namespace;
  let parsed;
  try {
    parsed = parseRef(c.ref, { namespace: ns, label: `${c.pointer}/source_ref` });
  } catch (e) {
    return { refused: `it is not a ref of vault ${ns}: ${(e as Error).message}` };
  }
  if (parsed.is_prefix) return { refused: 'it names a folder, not a note' };
  if (!ctx.compiled.allowed_prefixes.some((p) => isUnderPrefix(parsed.path, p))) return { refused: `it is outside allowed_prefixes (${ctx.compiled.allowed_prefixes.join(', ')})` };
  const check = checkPath(ctx.compiled, parsed.path);
  if (!check.ok) return { refused: `${check.reason} (${check.detail})` };
  try {
    const r = resolveRef(ctx.index, parsed);
    return { path: r.path, start: r.line_start, end: r.line_end };
  } catch (e) {
    return { unsupported: `it names nothing in this snapshot: ${(e as Error).message}` };
  }
}

/** A ref_id for chunk `chunkIndex` of `path` not in `used` (`lore.<stem>.chunkN`, then the long form, then `.2`, `.3` …, as the walk makes them). */
function freshRefId(path: string, chunkIndex: number, used: ReadonlySet<string>): string {
  let id = excerptRefId(path, chunkIndex);
  if (used.has(id)) id = excerptRefId(path, chunkIndex, true);
  for (let k = 2; used.has(id); k++) id = `${excerptRefId(path, chunkIndex, true)}.${k}`;
  return id;
}

/**
 * Verify one citation (module doc): refuse a ref the policy does not admit, else search the paraphrase
 * within the cited lines and take the best compact line run — most distinct paraphrase terms, then the
 * search's order — among those that are self-contained, support the paraphrase and may reach the packet.
 * The verified excerpt's ref_id is `lore.<note>.chunkN` (unique among `usedIds`), its trace entry is
 * runner_captured with the paraphrase as `query` and a `used_for` naming the draft excerpt's pointer and
 * ref_id and the cited ref. Pure over the index.
 */
export function verifyCitation(ctx: CitationContext, c: DraftCitation): CitationOutcome {
  const range = citedRange(ctx, c);
  if ('refused' in range) return { kind: 'refused', citation: c, detail: range.refused };
  if ('unsupported' in range) return { kind: 'unsupported', citation: c, detail: range.unsupported, searched: false };
  const hidden = hiddenTextIn(c.text, ctx.draft.hidden_context_audit.omitted_context_refs);
  if (hidden !== null) return { kind: 'unsupported', citation: c, detail: `not searched: the excerpt's text contains ${hidden}, which may not be written into the capture as a query`, searched: false };
  const { path, start, end } = range;
  const chunks = chunksOf(ctx.index, path).filter((k) => k.line_end >= start && k.line_start <= end);
  const hiddenSections = sectionsOf(ctx.compiled, path);
  const withheld = new Set(hiddenSections.flatMap((s) => s.chunks));
  if (chunks.length > 0 && chunks.every((k) => withheld.has(k.chunk_index))) {
    const s = hiddenSections.find((x) => chunks.some((k) => x.chunks.includes(k.chunk_index)));
    return { kind: 'refused', citation: c, detail: `its lines L${start}-L${end} lie in a hidden section${s ? ` (${s.pointer})` : ''}` };
  }
  const hits = search(ctx.index, c.text, { k: Math.max(1, chunks.length), corpus: ctx.corpus, paths: [path], expand: false, phrase: false });
  const links = outgoingLinks(ctx.index, path);
  const ns = ctx.index.namespace;
  let best: { v: VerifiedExcerpt; rank: number } | null = null;
  let closest: { shared: number; wanted: number; needed: number; lines: string } | null = null;
  hits.forEach((h, rank) => {
    const chunk = chunks.find((k) => k.chunk_index === h.chunk_index);
    if (!chunk) return;
    const a = Math.max(start, chunk.line_start);
    const b = Math.min(end, chunk.line_end);
    const lines = chunk.text.split('\n').slice(a - chunk.line_start, b - chunk.line_start + 1);
    const pick = compactExcerpt(lines, [c.text], { lineOffset: a, links });
    if (pick === null) return;
    const o = requirementOverlap(pick.text, { text: c.text });
    if (closest === null || o.shared > closest.shared) closest = { ...o, lines: `${formatRef(ns, path, { kind: 'chunk', index: chunk.chunk_index })} L${pick.line_start}-L${pick.line_end}` };
    if (!pick.self_contained || o.shared < o.needed) return;
    if (best !== null && o.shared <= best.v.shared) return;
    const refId = freshRefId(path, chunk.chunk_index, ctx.usedIds);
    const sourceRef = formatRef(ns, path, { kind: 'chunk', index: chunk.chunk_index });
    const trace = makeTraceEntry({
      trace_id: `trace.${refId.replace(/^lore\./, '')}`,
      query: c.text,
      namespace: ns,
      path,
      disk_path: notePathOnDisk(ctx.index, path),
      chunk_index: chunk.chunk_index,
      line_start: pick.line_start,
      line_end: pick.line_end,
      text: pick.exact,
      used_for: `verifies ${c.pointer} ${c.ref_id}, which cites ${c.ref}: shares ${o.shared} of its ${o.wanted} terms (${o.needed} needed to support it)`,
    });
    const excerpt = { ref_id: refId, source_ref: sourceRef, text: pick.text };
    if (withholdReason(excerpt, trace, ctx.draft, ctx.compiled, ctx.index) !== null) return;
    best = { v: { citation: c, excerpt, trace, path, chunk, ...o }, rank };
  });
  if (best === null) {
    const near = closest as { shared: number; wanted: number; needed: number; lines: string } | null;
    const detail =
      near === null
        ? `no lore line of ${formatRef(ns, path)} L${start}-L${end} holds a term of it`
        : `no self-contained line run of ${formatRef(ns, path)} L${start}-L${end} that may reach the packet shares enough of its terms (closest: ${near.lines}, ${near.shared} of its ${near.wanted} terms; ${near.needed} needed)`;
    return { kind: 'unsupported', citation: c, detail, searched: true };
  }
  const chosen = (best as { v: VerifiedExcerpt }).v;
  ctx.usedIds.add(chosen.excerpt.ref_id);
  return { kind: 'verified', verified: chosen };
}
