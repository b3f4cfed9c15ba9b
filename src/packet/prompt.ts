/**
 * Prompt rendering of the packet stage (docs/RETRIEVE.md, "Prompt rendering rules"): the source-excerpt
 * section and the `## Required Lore Research` section of `packet_prompt_text`, read and written so that
 * every other line of the draft's prompt is kept byte for byte.
 *
 * The renderers are exported so that a reviewer (or a test) can re-render a packet's prompt and compare.
 */
import type { SourceExcerpt, TraversalPolicy } from '../contracts/types.js';
import { repositoryAccessDenials } from '../contracts/rules.js';

/**
 * How a prompt lays out its sections. `markdown`: `## Heading` lines (Ghostlight's research packets);
 * `plain`: `Heading:` lines (Ghostlight's packet_only packets). A prompt with any line starting `## ` is
 * markdown.
 */
export type PromptStyle = 'markdown' | 'plain';

/** Detect the {@link PromptStyle} of a prompt. */
export function promptStyle(prompt: string): PromptStyle {
  return /^## /m.test(prompt) ? 'markdown' : 'plain';
}

const SOURCE_HEADER_MD = /^##\s+Source (?:Excerpts|Constraints)\s*$/i;
const SOURCE_HEADER_PLAIN = /^Source (?:constraints|excerpts):\s*$/i;
const OUTPUT_HEADER_MD = /^##\s+Output Contract\s*$/i;
const OUTPUT_HEADER_PLAIN = /^Output contract:\s*$/i;
const RESEARCH_HEADER = /^##\s+Required Lore Research\s*$/;
const BULLET_LINE = /^(?:- |  )/;
/**
 * Everything some reader treats as a line break: CRLF, LF, CR, and the separators Python's
 * `str.splitlines()` also splits on (VT, FF, FS, GS, RS, NEL, U+2028, U+2029).
 */
const LINE_BREAKS = /\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]/;

/**
 * Render the source-constraint section body: one bullet per excerpt, in order.
 * - markdown style: `- <ref_id>: <text>` (Ghostlight research packets' `## Source Excerpts`);
 * - plain style: `- <text>` (Ghostlight packet_only packets' `Source constraints:`).
 * With a label for the excerpt's ref_id in `labels` (the note a lore excerpt comes from,
 * {@link loreLabel}), the text is preceded by `<label>: ` — display form only, so that "They …" or "Its …"
 * in a one-sentence excerpt has its note in view; the trace keeps the exact lines.
 * A multi-line text continues on lines indented by two spaces (an empty line becomes `"  "`), so the
 * section is a single run of `- ` / two-space lines and {@link parseSourceSection} recovers each text exactly.
 */
export function renderSourceSection(excerpts: readonly SourceExcerpt[], style: PromptStyle, labels?: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const ex of excerpts) {
    const lines = ex.text.split('\n');
    const label = labels?.get(ex.ref_id);
    const head = `${label ? `${label}: ` : ''}${lines[0] ?? ''}`;
    const first = style === 'markdown' ? `- ${ex.ref_id}: ${head}` : `- ${head}`;
    out.push(first);
    for (const l of lines.slice(1)) out.push(`  ${l}`);
  }
  return out;
}

/**
 * The display label of a lore excerpt's note: its title, then the chunk's heading path without headings
 * that repeat the title, joined with ` › ` (`Aeronautics Unlimited › Territory And Sovereignty`). Wikilinks
 * in a heading show as their display text; line breaks and runs of white space become one space, so the
 * label stays on its bullet's line.
 */
export function loreLabel(title: string, headingPath: readonly string[]): string {
  const norm = (t: string): string =>
    t
      .replace(/!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]/g, (_m, target: string, shown?: string) => shown ?? target)
      .replace(/\s+/g, ' ')
      .trim();
  const parts = [norm(title), ...headingPath.map(norm).filter((h) => h !== '' && h.toLowerCase() !== norm(title).toLowerCase())];
  return parts.filter((p) => p !== '').join(' › ');
}

/**
 * The title a responder sees for a note: its `title` (frontmatter `title`, else the file name without
 * `.md`), or for a note titled `index` — a folder's map of content, Obsidian's folder-note convention — its
 * folder's name, as the traversal names an `index` seed (src/traversal/traverse.ts `seedTitle`): `Factions`
 * for `…/Factions/index.md`, never the bare file name. `path` is the vault-relative path (`/`-separated).
 */
export function noteDisplayTitle(title: string, path: string): string {
  if (title.toLowerCase() !== 'index') return title;
  const parts = path.split('/');
  return parts.length > 1 ? (parts[parts.length - 2] as string) : title;
}

/** Line index of the first line matching `re` at or after `from`, or -1. */
function findLine(lines: readonly string[], re: RegExp, from = 0): number {
  for (let i = from; i < lines.length; i++) if (re.test(lines[i] as string)) return i;
  return -1;
}

/** End (exclusive) of the bullet run that starts right after `header`. */
function bulletRunEnd(lines: readonly string[], header: number): number {
  let end = header + 1;
  while (end < lines.length && BULLET_LINE.test(lines[end] as string)) end++;
  return end;
}

/**
 * Read back the source section of a prompt: the texts of its bullets (and, in markdown style, their
 * ref_ids), or null when the prompt has no source section. Inverse of {@link renderSourceSection} for text
 * without a `": "` in a markdown ref_id.
 */
export function parseSourceSection(prompt: string): { style: PromptStyle; items: { ref_id: string | null; text: string }[] } | null {
  const lines = prompt.split('\n');
  const found = findSourceHeader(lines);
  if (!found) return null;
  const { header, style } = found;
  const items = sourceItems(lines, header, bulletRunEnd(lines, header), style).map(({ ref_id, text }) => ({ ref_id, text }));
  return { style, items };
}

/**
 * The source section's header line (0-based index) and the style it is written in: the first markdown
 * header (`## Source Excerpts` / `## Source Constraints`), else the first plain one (`Source constraints:` /
 * `Source excerpts:`); null when the prompt has neither.
 */
function findSourceHeader(lines: readonly string[]): { header: number; style: PromptStyle } | null {
  const md = findLine(lines, SOURCE_HEADER_MD);
  if (md >= 0) return { header: md, style: 'markdown' };
  const plain = findLine(lines, SOURCE_HEADER_PLAIN);
  return plain >= 0 ? { header: plain, style: 'plain' } : null;
}

/**
 * Replace (or insert) the source-constraint section of `prompt` so that it lists exactly `excerpts`.
 *
 * Rules: the section is the header line (`## Source Excerpts` / `## Source Constraints`, or
 * `Source constraints:` / `Source excerpts:`) and the run of bullet lines right after it (lines starting
 * `- ` or two spaces); everything else in the prompt is kept byte for byte. Without a section, one is
 * inserted in the prompt's style before the output-contract header (`## Output Contract` /
 * `Output contract:`), else appended at the end, separated by one blank line. With no excerpts, the
 * section is removed. Returns the new prompt and the old bullet lines that did not survive (reported as a
 * finding, never dropped silently).
 */
export function applySourceSection(prompt: string, excerpts: readonly SourceExcerpt[], labels?: ReadonlyMap<string, string>): { prompt: string; removed: string[] } {
  const lines = prompt.split('\n');
  const found = findSourceHeader(lines);
  const header = found ? found.header : -1;
  const style: PromptStyle = found ? found.style : promptStyle(prompt);
  const body = renderSourceSection(excerpts, style, labels);
  if (header >= 0) {
    const end = bulletRunEnd(lines, header);
    const old = lines.slice(header + 1, end);
    const kept = new Set(body);
    const removed = old.filter((l) => !kept.has(l));
    if (excerpts.length === 0) {
      // Drop the header, its bullets and one separating blank line after them.
      const after = end < lines.length && lines[end] === '' ? end + 1 : end;
      lines.splice(header, after - header);
    } else {
      lines.splice(header + 1, end - header - 1, ...body);
    }
    return { prompt: lines.join('\n'), removed };
  }
  if (excerpts.length === 0) return { prompt, removed: [] };
  const headerLine = style === 'markdown' ? '## Source Excerpts' : 'Source constraints:';
  const block = [headerLine, ...body];
  const output = findLine(lines, style === 'markdown' ? OUTPUT_HEADER_MD : OUTPUT_HEADER_PLAIN);
  if (output >= 0) {
    lines.splice(output, 0, ...block, '');
    return { prompt: lines.join('\n'), removed: [] };
  }
  const trimmed = prompt.replace(/\n+$/, '');
  return { prompt: `${trimmed}\n\n${block.join('\n')}`, removed: [] };
}

/** One bullet of a source section: its lines (0-based, end exclusive) and what it renders. */
interface SourceItem {
  start: number;
  end: number;
  ref_id: string | null;
  text: string;
}

/** The bullets of the run that starts after `header`, each with its line span. */
function sourceItems(lines: readonly string[], header: number, end: number, style: PromptStyle): SourceItem[] {
  const items: SourceItem[] = [];
  for (let i = header + 1; i < end; i++) {
    const line = lines[i] as string;
    if (line.startsWith('- ')) {
      let body = line.slice(2);
      let refId: string | null = null;
      if (style === 'markdown') {
        const colon = body.indexOf(': ');
        if (colon > 0) {
          refId = body.slice(0, colon);
          body = body.slice(colon + 2);
        }
      }
      items.push({ start: i, end: i + 1, ref_id: refId, text: body });
    } else {
      const last = items[items.length - 1];
      if (last) {
        last.text += '\n' + line.slice(2);
        last.end = i + 1;
      }
    }
  }
  return items;
}

/**
 * Merge lore excerpts into a draft prompt without regenerating it: every line of the draft's prompt
 * survives verbatim, except the bullets that render an excerpt in `replaced` (a draft lore excerpt
 * loretrace replaced: a markdown bullet `- <ref_id>: <text>` with the same ref_id and text, or a bullet
 * whose text is the excerpt's text) — in the source section and in the draft's lore section (see below; an equal bullet in another section stays) (a
 * Ghostlight research prompt renders its lore excerpts twice: as `- <text>` under
 * `## Retrieved Lore To Keep In View` and as `- <ref_id>: <text>` under `## Source Excerpts`). The `added`
 * excerpts ({@link renderSourceSection}, in the source section's style, but without a ref_id when the bullets
 * of the run they join carry none: none starts `- <id>: ` with an id of `draftRefIds`, the draft's
 * source-excerpt ref_ids) are rendered once: in the draft's
 * *lore section* — the bullet run outside the source section that rendered the first replaced excerpt —
 * after its last remaining bullet, so the lore the prompt asks the responder to keep in view is exactly
 * the packet's; else after the source section's last remaining bullet; without a source section, one is
 * inserted as {@link applySourceSection} does. Headers always stay.
 *
 * Why: the draft's source lines are often the author's own constraints (tone, local-knowledge limits)
 * rather than renderings of `visible_context.source_excerpts`; regenerating the section from the excerpts
 * deleted them, and keeping a replaced paraphrase elsewhere in the prompt would show lore the packet does
 * not carry. With `localContext` (the draft's `visible_context.local_context_prompt`, which the prompt must
 * contain verbatim: the validator's `prompt.missing_local_context`), the lines of it the merge changes are
 * changed in it too and the new text is returned as `localContext` (only when it occurs as whole lines;
 * otherwise its lines are left untouched). Returns the new prompt, the removed lines, in prompt order (for
 * the finding), and the bullet lines inserted for the added excerpts.
 */
export function mergeSourceSection(
  prompt: string,
  change: { replaced: readonly SourceExcerpt[]; added: readonly SourceExcerpt[]; labels?: ReadonlyMap<string, string>; localContext?: string; draftRefIds?: ReadonlySet<string> },
): { prompt: string; removed: string[]; inserted: string[]; localContext?: string } {
  const lines = prompt.split('\n');
  const block = localContextLines(prompt, change.localContext);
  const found = findSourceHeader(lines);
  const style: PromptStyle = found ? found.style : promptStyle(prompt);
  const drop = new Set<number>();
  let sourceEnd = -1;
  if (found) {
    const { header } = found;
    sourceEnd = bulletRunEnd(lines, header);
    const isReplaced = (item: SourceItem): boolean =>
      change.replaced.some((ex) => item.text === ex.text && (item.ref_id === null || item.ref_id === ex.ref_id || found.style === 'plain'));
    for (const it of sourceItems(lines, header, sourceEnd, found.style).filter(isReplaced)) for (let k = it.start; k < it.end; k++) drop.add(k);
  }
  const lore = loreRenderings(lines, change.replaced, found ? [found.header, sourceEnd] : null, protectedLines(prompt, change.localContext, block));
  for (const k of lore.lines) drop.add(k);
  // Where the added excerpts go: after the last kept line of the lore run, else of the source section.
  let at: number | null = null;
  let run: [number, number] | null = null;
  if (lore.run !== null) {
    run = lore.run;
    at = lore.run[0] - 1;
    for (let k = lore.run[0]; k < lore.run[1]; k++) if (!drop.has(k)) at = k;
  } else if (found) {
    run = [found.header + 1, sourceEnd];
    at = found.header;
    for (let k = found.header + 1; k < sourceEnd; k++) if (!drop.has(k)) at = k;
  }
  // The added bullets follow the style of the run they join: a ref_id only where its bullets carry one.
  const body = renderSourceSection(change.added, style === 'markdown' && run !== null && !bulletsCarryIds(lines, run, change.draftRefIds) ? 'plain' : style, change.labels);
  const removed = [...drop].sort((a, b) => a - b).map((k) => lines[k] as string);
  // The local context block, as the merge leaves it (the prompt must keep containing it verbatim).
  const local = block === null ? undefined : lines.flatMap((l, k) => (k < block[0] || k > block[1] ? [] : [...(drop.has(k) ? [] : [l]), ...(k === at ? body : [])])).join('\n');
  const withLocal = <T extends { prompt: string; removed: string[] }>(r: T): T & { localContext?: string } => (local === undefined ? r : { ...r, localContext: local });
  if (at === null) {
    const kept = lines.filter((_, k) => !drop.has(k)).join('\n');
    return withLocal({ prompt: applySourceSection(kept, change.added, change.labels).prompt, removed, inserted: renderSourceSection(change.added, style, change.labels) });
  }
  const out: string[] = [];
  if (at < 0) out.push(...body);
  lines.forEach((l, k) => {
    if (!drop.has(k)) out.push(l);
    if (k === at) out.push(...body);
  });
  return withLocal({ prompt: out.join('\n'), removed, inserted: body });
}

/**
 * True when a bullet of `lines[run[0]..run[1])` (0-based, end exclusive) starts `- <ref_id>: ` with a
 * ref_id of the draft's `visible_context.source_excerpts` (`ids`): the draft labels that run's bullets by
 * their excerpt, so the added ones are too. A run of bare `- <text>` bullets (the Sella draft's
 * `## Retrieved Lore To Keep In View`) carries none, and an internal id there would be noise to the
 * responder; the trace and `source_excerpts` keep the exact refs either way.
 */
function bulletsCarryIds(lines: readonly string[], run: readonly [number, number], ids: ReadonlySet<string> | undefined): boolean {
  if (ids === undefined) return true;
  let bullets = 0;
  for (let k = run[0]; k < run[1]; k++) {
    if (!(lines[k] as string).startsWith('- ')) continue;
    bullets++;
    const m = /^- ([^\s:]+): /.exec(lines[k] as string);
    if (m && ids.has(m[1] as string)) return true;
  }
  // A run with no bullet shows no style of its own: the section's style decides.
  return bullets === 0;
}

/**
 * Lines the lore merge must not touch: those of a local context block that occurs in the prompt but not as
 * whole lines (changing them would break the validator's `prompt.missing_local_context`); else null.
 */
function protectedLines(prompt: string, localContext: string | undefined, block: [number, number] | null): [number, number] | null {
  if (block !== null || localContext === undefined || localContext === '') return null;
  const at = prompt.indexOf(localContext);
  if (at < 0) return null;
  const first = prompt.slice(0, at).split('\n').length - 1;
  return [first, first + localContext.split('\n').length - 1];
}

/**
 * The 0-based line range (inclusive) that `localContext` (the draft's `visible_context.local_context_prompt`)
 * covers in `prompt`, when it occurs there as whole lines; else null (then the merge cannot keep the prompt
 * containing it verbatim, and it is left alone: see {@link mergeSourceSection}).
 */
function localContextLines(prompt: string, localContext: string | undefined): [number, number] | null {
  if (localContext === undefined || localContext === '') return null;
  const at = prompt.indexOf(localContext);
  if (at < 0) return null;
  const end = at + localContext.length;
  if ((at > 0 && prompt[at - 1] !== '\n') || (end < prompt.length && prompt[end] !== '\n')) return null;
  const first = prompt.slice(0, at).split('\n').length - 1;
  return [first, first + localContext.split('\n').length - 1];
}

/**
 * The bullets outside the source section (`source`: its header index and bullet-run end) that render a
 * replaced excerpt — `- <text>` or `- <ref_id>: <text>`, a multi-line text continuing on two-space lines —
 * inside the bullet run holding the first of them (the draft's lore section; an equal bullet in another
 * section is the author's own and stays), as line indexes, and that run (start, end exclusive), or null.
 */
function loreRenderings(lines: readonly string[], replaced: readonly SourceExcerpt[], source: [number, number] | null, keep: [number, number] | null): { lines: number[]; run: [number, number] | null } {
  const out: number[] = [];
  let run: [number, number] | null = null;
  const forms = replaced.flatMap((ex) => [renderSourceSection([ex], 'plain'), renderSourceSection([ex], 'markdown')]);
  for (let i = 0; i < lines.length; i++) {
    if (source !== null && i >= source[0] && i < source[1]) continue;
    if (keep !== null && i >= keep[0] && i <= keep[1]) continue;
    if (!(lines[i] as string).startsWith('- ')) continue;
    const form = forms.find((f) => f.every((l, k) => lines[i + k] === l));
    if (!form) continue;
    for (let k = 0; k < form.length; k++) out.push(i + k);
    if (run === null) {
      let a = i;
      while (a > 0 && BULLET_LINE.test(lines[a - 1] as string)) a--;
      let b = i;
      while (b < lines.length && BULLET_LINE.test(lines[b] as string)) b++;
      run = [a, b];
    }
    i += form.length - 1;
  }
  // Only the lore section's renderings: an equal bullet in another section is the author's own line (hostile trial s8 §5).
  return { lines: run === null ? out : out.filter((k) => k >= (run as [number, number])[0] && k < (run as [number, number])[1]), run };
}

/** A draft prompt line the builder rewrote, and why (reported in the `prompt_lines_rewritten` finding). */
export interface RewrittenLine {
  from: string;
  to: string;
  reason: string;
}

/** What {@link reconcileLaneLines} compares the draft's prompt against. */
export interface LaneLineInput {
  /** True when the built packet gives the responder scoped repository access (`no_repo_access: false`). */
  repoAccess: boolean;
  /** `output_contract.required_fields` of the draft and of the built packet. */
  draftFields: readonly string[];
  fields: readonly string[];
  /** `packet_id` of the draft and of the built packet. */
  draftPacketId: string;
  packetId: string;
  /**
   * The draft's `visible_context.local_context_prompt` (the prompt must contain it verbatim): when it
   * occurs in the prompt as whole lines, its lines are rewritten with the prompt's and the new text is
   * returned, so a rewrite never breaks `prompt.missing_local_context`.
   */
  localContext?: string;
}

const REPO_ACCESS_ONLY_THROUGH = 'repository access only through the lore search described under Required Lore Research';

/** `no repository access` / `without repo access` …: a denial phrased as a noun phrase, rewritten in place. */
const NO_ACCESS_NOUN_PHRASE = /\b(no|without) (?:repository|repo|vault|lore) access\b/iu;

/** `- `, `* `, `1. ` and the white space before a clause's words, kept when the clause is rewritten. */
const CLAUSE_LEAD = /^\s*(?:[-*+]\s+|\d+[.)]\s+)?/u;

/**
 * Rewrite every clause of `line` that denies repository access ({@link repositoryAccessDenials}, the
 * validator's `prompt.contradicts_repo_access` rule) to say the access goes through the research proxy.
 * A noun phrase is rewritten in place (`no repository access` → `repository access only through the lore
 * search described under Required Lore Research`, `without …` → `with …`), so `You have no conversation
 * context, no repository access, …` keeps its other clauses; any other denying clause (`You cannot access
 * the repository`) becomes `You have repository access only through …` (`The responder has …` for a
 * clause about the responder), its list marker, leading white space, first letter's case and any
 * quotation after the denial kept. The rest of the line is unchanged.
 */
function grantRepositoryAccess(line: string): string {
  let out = line;
  // Right to left, so the earlier spans' offsets stay valid.
  for (const { start, end } of repositoryAccessDenials(line).reverse()) {
    const clause = line.slice(start, end);
    const lead = (CLAUSE_LEAD.exec(clause) as RegExpExecArray)[0];
    const body = clause.slice(lead.length).replace(/\s+$/u, '');
    const trail = clause.slice(lead.length + body.length);
    // A quotation later in the clause is kept whole (the rule never reads inside one).
    const quote = body.search(/["“]/u);
    const noun = NO_ACCESS_NOUN_PHRASE.exec(quote >= 0 ? body.slice(0, quote) : body);
    let rewritten: string;
    if (noun) {
      const phrase = (noun[1] as string).toLowerCase() === 'without' ? `with ${REPO_ACCESS_ONLY_THROUGH}` : REPO_ACCESS_ONLY_THROUGH;
      rewritten = body.slice(0, noun.index) + sameCase(noun[0], phrase) + body.slice(noun.index + noun[0].length);
    } else {
      const subject = /^the responder\b/iu.test(body) ? `the responder has ${REPO_ACCESS_ONLY_THROUGH}` : `you have ${REPO_ACCESS_ONLY_THROUGH}`;
      rewritten = sameCase(body, subject) + (quote >= 0 ? ` ${body.slice(quote)}` : '');
    }
    out = out.slice(0, start) + lead + rewritten + trail + out.slice(end);
  }
  return out;
}

/** `text` with its first letter upper-cased when `like` starts with an upper-case letter. */
function sameCase(like: string, text: string): string {
  return /^\p{Lu}/u.test(like) ? text.charAt(0).toUpperCase() + text.slice(1) : text;
}

/**
 * Rewrite the draft prompt lines that contradict the packet as built — the only draft lines the builder
 * may change — and list each. A line that denies repository access (`You have no … repository access …`,
 * `You cannot access the repository`: {@link grantRepositoryAccess}) in a packet that grants scoped
 * research; a key list (`… exact keys: a, b.` / `Required fields: a, b`) naming exactly the draft's required_fields when the built packet requires others; a `Packet id: <draft
 * id>` line when the packet got a new id. Everything else is kept byte for byte. With `input.localContext`
 * occurring as whole lines, `localContext` is returned when a rewrite changed the prompt (its lines as rewritten).
 */
export function reconcileLaneLines(prompt: string, input: LaneLineInput): { prompt: string; rewritten: RewrittenLine[]; localContext?: string } {
  const rewritten: RewrittenLine[] = [];
  const draftList = input.draftFields.join(', ');
  const fieldsChanged = draftList !== input.fields.join(', ');
  const block = localContextLines(prompt, input.localContext);
  const out = prompt.split('\n').map((line) => {
    let to = line;
    const reasons: string[] = [];
    if (input.repoAccess && repositoryAccessDenials(to).length > 0) {
      to = grantRepositoryAccess(to);
      reasons.push('the packet grants scoped repository research (no_repo_access: false)');
    }
    if (fieldsChanged && draftList !== '' && to.includes(draftList) && /\b(?:keys|fields)\b/i.test(to)) {
      to = to.replace(draftList, input.fields.join(', '));
      reasons.push('output_contract.required_fields changed');
    }
    if (input.packetId !== input.draftPacketId && /^\s*Packet id:/i.test(to) && to.includes(input.draftPacketId)) {
      to = to.replace(input.draftPacketId, input.packetId);
      reasons.push('the packet has a new packet_id');
    }
    if (to !== line) rewritten.push({ from: line, to, reason: reasons.join('; ') });
    return to;
  });
  if (block === null || rewritten.length === 0) return { prompt: out.join('\n'), rewritten };
  return { prompt: out.join('\n'), rewritten, localContext: out.slice(block[0], block[1] + 1).join('\n') };
}

/** What the `## Required Lore Research` section needs. */
export interface ResearchSectionInput {
  allowed_scope: readonly string[];
  traversal_policy: TraversalPolicy;
  research_instructions: readonly string[];
}

/** The search proxy's tools as the prompt names them (src/proxy/tools.ts TOOL_NAMES, same order). */
export const PROXY_TOOLS: readonly (readonly [string, string])[] = [
  ['lore_search', 'find refs by words'],
  ['lore_read', 'exact lines with their provenance'],
  ['lore_links', 'the links of an admitted note'],
  ['lore_follow', 'follow a link inside the policy'],
  ['research_status', 'what you consulted and the budgets left'],
];

/** Output fields a research-enabled responder must add (seed 001, Output Captures). */
export const RESEARCH_OUTPUT_FIELDS: readonly string[] = ['consulted_refs', 'followed_refs', 'research_trace', 'research_summary'];

/**
 * Render the `## Required Lore Research` section (responder_scoped_repository_search, seed 001: "The packet
 * must include a Required Lore Research section, allowed_scope, and research_instructions"): what to do,
 * the seed scope (every allowed_scope entry), the traversal policy (depth, every allowed prefix, seeds,
 * link classes, stop conditions), the research instructions, and what the responder may do with the
 * loretrace search proxy (its tools, what it refuses and records). How the runner starts the proxy
 * (`loretrace serve`, docs/PROXY.md) is the runner's business and not in the prompt: the prompt says only
 * what the responder may do. Empty lists render as `- (none)`;
 * a multi-line item continues on lines indented two spaces deeper (line breaks: {@link LINE_BREAKS}), so
 * no item starts a prompt line of its own. Returns lines, the first being the heading.
 */
export function renderResearchSection(input: ResearchSectionInput): string[] {
  // A multi-line item continues on lines indented two spaces deeper, so no item can start a prompt line
  // of its own (a `## Output Contract` inside a stop condition stays inside its bullet, and the section's
  // end stays where applyResearchSection looks for it: a second run gives the same prompt).
  const list = (items: readonly string[], indent = ''): string[] =>
    items.length === 0
      ? [`${indent}- (none)`]
      : items.flatMap((s) => s.split(LINE_BREAKS).map((l, i) => (i === 0 ? `${indent}- ${l}` : `${indent}  ${l}`)));
  const tp = input.traversal_policy;
  return [
    '## Required Lore Research',
    'Before answering, consult the seed research scope below and follow relevant links only within the traversal policy.',
    'Use what you find to constrain behavior, affordances, institutions, vocabulary, material stakes, territory and social pressure. Do not use research to learn hidden character state, author-only answers or future branches.',
    'When a source contradicts this packet, follow the packet for what your character knows and name the contradiction in unresolved_hooks.',
    `Add ${RESEARCH_OUTPUT_FIELDS.join(', ')} to your JSON object; an answer with no consulted refs is a failed research-enabled response.`,
    '',
    'Seed research scope:',
    ...list(input.allowed_scope),
    '',
    'Traversal policy:',
    `- Max link depth: ${tp.max_link_depth}`,
    '- Allowed prefixes:',
    ...list(tp.allowed_prefixes, '  '),
    '- Required seed refs:',
    ...list(tp.required_seed_refs, '  '),
    '- Follow link classes:',
    ...list(tp.follow_link_classes, '  '),
    '- Stop conditions:',
    ...list(tp.stop_conditions, '  '),
    '',
    'Research instructions:',
    ...list(input.research_instructions),
    '',
    'Lore search proxy:',
    '- Your only lore access is the loretrace search proxy. It enforces this traversal policy, refuses anything outside it, and records every lookup as a runner_captured research trace entry.',
    `- Its tools: ${PROXY_TOOLS.map((t) => `${t[0]} (${t[1]})`).join(', ')}.`,
    '- Cite each source you use by the ref, chunk and line range the proxy returned.',
  ];
}

/**
 * The first line of each blank-line-separated block of loretrace's own research section after its opening
 * paragraph ({@link renderResearchSection}), so that a plain prompt's section keeps its own blocks.
 */
const RESEARCH_BLOCK_LABELS: ReadonlySet<string> = new Set(['Seed research scope:', 'Traversal policy:', 'Research instructions:', 'Lore search proxy:']);

/** A markdown ATX heading line of any level (`# `, `## ` … `###### `). */
const ANY_HEADING = /^#{1,6}\s/;

/**
 * End (0-based, exclusive) of the `## Required Lore Research` section whose heading is line `at`: the
 * section ends at the next boundary the draft itself uses between sections —
 * - the next heading of the same or a higher level (`# ` or `## `), in any prompt;
 * - in a plain prompt (no heading line besides the research heading: sections are `Label:` lines, as in
 *   Ghostlight's packet_only prompts), also the next blank-line-separated block, unless that block starts
 *   with one of the labels of loretrace's own research section ({@link RESEARCH_BLOCK_LABELS}: a section
 *   loretrace rendered is one section on a second run); the first block after the heading is the section's.
 * Without this second boundary a plain prompt's section ran to the end of the prompt, and replacing or
 * removing it deleted the draft's action labels, source constraints and output contract (hostile trial s8 §1).
 */
function researchSectionEnd(lines: readonly string[], at: number): number {
  const plain = !lines.some((l, k) => k !== at && ANY_HEADING.test(l));
  let end = at + 1;
  // The first block after the heading is the section's own, even after a blank line.
  let body = false;
  while (end < lines.length) {
    const line = lines[end] as string;
    if (/^#{1,2} /.test(line)) break;
    if (plain && body && line.trim() !== '' && lines[end - 1] === '' && !RESEARCH_BLOCK_LABELS.has(line.trim())) break;
    if (line.trim() !== '') body = true;
    end++;
  }
  return end;
}

/**
 * The lines of the prompt's `## Required Lore Research` section (heading to the section's end,
 * {@link researchSectionEnd}, trailing blank lines left out), or [] when it has none.
 */
export function researchSectionLines(prompt: string): string[] {
  const lines = prompt.split('\n');
  const at = findLine(lines, RESEARCH_HEADER);
  if (at < 0) return [];
  let end = researchSectionEnd(lines, at);
  while (end > at + 1 && lines[end - 1] === '') end--;
  return lines.slice(at, end);
}

/**
 * Replace (or insert) the `## Required Lore Research` section; `section` null removes it. The section runs
 * from its heading to its end ({@link researchSectionEnd}: the next `#`/`##` heading, or in a plain prompt
 * the next blank-line-separated block of the draft's own); only those lines are replaced or removed, every
 * other line is kept. Without one: in a markdown prompt it goes right before the first `## ` heading; in a
 * plain prompt it is appended at the end.
 */
export function applyResearchSection(prompt: string, section: readonly string[] | null): string {
  const lines = prompt.split('\n');
  const at = findLine(lines, RESEARCH_HEADER);
  if (at >= 0) {
    const end = researchSectionEnd(lines, at);
    // keep the blank line(s) before the next section
    let stop = end;
    while (stop > at + 1 && lines[stop - 1] === '') stop--;
    if (section === null) {
      lines.splice(at, end - at);
      return lines.join('\n');
    }
    lines.splice(at, stop - at, ...section);
    return lines.join('\n');
  }
  if (section === null) return prompt;
  if (promptStyle(prompt) === 'markdown') {
    const first = findLine(lines, /^## /);
    lines.splice(first, 0, ...section, '');
    return lines.join('\n');
  }
  return `${prompt.replace(/\n+$/, '')}\n\n${section.join('\n')}`;
}

/**
 * The heading the coordinator lane gives a draft's `## Required Lore Research` section
 * ({@link coordinatorResearchSection}): neutral, since the responder no longer researches but still
 * reads retrieved lore (the packet's excerpts), and the guards are about that lore.
 */
export const LORE_USE_HEADING = '## Using Retrieved Lore';

/** A draft line the coordinator lane changed in the research section: `to` null when it was removed. */
export interface ResearchLineChange {
  from: string;
  to: string | null;
  reason: string;
}

/**
 * A sentence that directs the responder to look lore up itself: an imperative lookup verb (`inspect`,
 * `consult`, `search`, `browse`, `look up` / `through` / `into`, not their past participles: "consulted
 * refs" names an output field, "documents actually inspected" describes one), following links (`follow
 * relevant wikilinks`; the policy field label `Follow link classes:` is a listing, not an order), reading the
 * repository, its notes or refs (`read the seed refs`), or the research tools and the search proxy by name
 * (`lore_search`, `the lore research tools`, `the proxy`).
 */
const LOOKUP_DIRECTIVE: readonly RegExp[] = [
  /\b(?:inspect|consult|search|browse|look\s+(?:up|through|into))(?:ing)?\b/i,
  /\bfollow(?:ing)?\s+(?:[\p{L}'’-]+\s+){0,2}(?:wiki)?links?\b(?!\s+class)/iu,
  /\bread(?:ing)?\s+(?:the\s+)?(?:seed|repository|repo|vault|lore\s+(?:files?|notes?)|notes|refs)\b/i,
  /\b(?:research|lore|search)\s+tools?\b/i,
  /\b(?:search\s+)?proxy\b/i,
  /\b(?:lore_search|lore_read|lore_links|lore_follow|research_status)\b/,
];
/** The research output fields (seed 001, Output Captures) as a line names them: by key or in words. */
const RESEARCH_FIELD_WORDS: readonly (readonly [string, RegExp])[] = [
  ['consulted_refs', /\bconsulted(?:_|\s+(?:seed\s+)?)refs?\b/i],
  ['followed_refs', /\bfollowed(?:_|\s+)refs?\b/i],
  ['research_trace', /\bresearch(?:_|\s+)trace\b/i],
  ['research_summary', /\bresearch(?:_|\s+)summary\b/i],
];
/** Isolation words: a sentence with one is a guard and stays even when it also names the procedure. */
const ISOLATION_GUARD = /\b(?:hidden|author-only|future[- ]branch\w*|another character|contradict\w*)\b/i;

/**
 * Why one sentence of a draft's research section contradicts the coordinator lane, or null when it does
 * not: it directs a lookup ({@link LOOKUP_DIRECTIVE}; a clause denying repository access,
 * `repositoryAccessDenials`, is not one: "do not search the lore archive" agrees with the lane), or it asks
 * for a research output field the built packet does not require (`fields`: its
 * `output_contract.required_fields`). A sentence carrying an isolation guard ({@link ISOLATION_GUARD}) is
 * never a contradiction: a guard on hidden state stays whatever clause stands beside it.
 */
export function coordinatorLaneContradiction(sentence: string, fields: readonly string[]): string | null {
  if (ISOLATION_GUARD.test(sentence)) return null;
  let open = sentence;
  for (const { start, end } of repositoryAccessDenials(sentence)) open = open.slice(0, start) + ' '.repeat(end - start) + open.slice(end);
  if (LOOKUP_DIRECTIVE.some((re) => re.test(open))) return 'it tells the responder to look lore up; in coordinator_scoped_retrieval the responder has no repository access (seed 001)';
  const missing = RESEARCH_FIELD_WORDS.filter(([f, re]) => re.test(sentence) && !fields.includes(f)).map(([f]) => f);
  if (missing.length > 0) return `it asks for research output (${missing.join(', ')}) that output_contract.required_fields of the packet does not require`;
  return null;
}

/** Sentences of a line's text: split after `.`, `!` or `?` followed by white space. */
function sentencesOf(text: string): string[] {
  return text.split(/(?<=[.!?])\s+/u).filter((t) => t !== '');
}

/**
 * The coordinator lane's version of a draft's `## Required Lore Research` section (`section`: its lines,
 * heading first, as {@link researchSectionLines} reads them; `fields`: the built packet's
 * `output_contract.required_fields`). In this lane the responder has no repository access and does not
 * research, but still reads retrieved lore (the packet's excerpts). The only draft lines changed are those
 * that contradict the lane (promise 2, never deleting the character's own prompt lines; seed 001: retrieval
 * can make a packet worse), each listed in `changes` with its reason:
 * - the heading becomes {@link LORE_USE_HEADING} (the section is no longer a research order);
 * - a line (with the two-space lines that continue it) is tested sentence by sentence with
 *   {@link coordinatorLaneContradiction}; a single line keeps its list marker and its other sentences
 *   (rewritten: `Use the lore research tools before answering. Seed research scope:` → `Seed research
 *   scope:`), and goes when none is left; a continued item goes whole when its text contradicts the lane;
 * - a block label (`Lore search proxy:`) whose every item went goes with them.
 * Every other line — guards on how lore is used, scope and policy listings, the author's own lines — stays
 * verbatim and in order; blank lines stay. When nothing but the heading and blank lines is left the
 * section goes (`lines` is []). Returns the new section and the changes in section order.
 */
export function coordinatorResearchSection(section: readonly string[], fields: readonly string[]): { lines: string[]; changes: ResearchLineChange[] } {
  if (section.length === 0) return { lines: [], changes: [] };
  const heading = section[0] as string;
  const out: (string | null)[] = [LORE_USE_HEADING];
  const changes: { at: number; change: ResearchLineChange }[] = [];
  const removedAt = new Set<number>();
  for (let i = 1; i < section.length; i++) {
    const line = section[i] as string;
    if (line.trim() === '') {
      out.push(line);
      continue;
    }
    const first = i;
    const unit = [line];
    while (i + 1 < section.length && /^ {2}/.test(section[i + 1] as string) && !/^\s*[-*+]\s/.test(section[i + 1] as string)) unit.push(section[++i] as string);
    if (unit.length > 1) {
      const reason = coordinatorLaneContradiction(unit.map((l) => l.trim()).join(' '), fields);
      unit.forEach((l, k) => {
        if (reason === null) out.push(l);
        else {
          out.push(null);
          removedAt.add(first + k);
          changes.push({ at: first + k, change: { from: l, to: null, reason } });
        }
      });
      continue;
    }
    const lead = (/^\s*(?:[-*+]\s+|\d+[.)]\s+)?/u.exec(line) as RegExpExecArray)[0];
    const sentences = sentencesOf(line.slice(lead.length));
    const reasons = sentences.map((t) => coordinatorLaneContradiction(t, fields));
    if (reasons.every((r) => r === null)) {
      out.push(line);
      continue;
    }
    const keptSentences = sentences.filter((_, k) => reasons[k] === null);
    const reason = [...new Set(reasons.filter((r): r is string => r !== null))].join('; ');
    if (keptSentences.length === 0) {
      out.push(null);
      removedAt.add(first);
      changes.push({ at: first, change: { from: line, to: null, reason } });
    } else {
      const to = lead + keptSentences.join(' ');
      out.push(to);
      changes.push({ at: first, change: { from: line, to, reason } });
    }
  }
  // A label (`Lore search proxy:`) whose block's every item went: nothing is left for it to label.
  for (let i = 1; i < section.length; i++) {
    const line = section[i] as string;
    if (out[i] !== line || !/:\s*$/.test(line) || /^\s*[-*+]\s/.test(line)) continue;
    let items = 0;
    let gone = 0;
    for (let k = i + 1; k < section.length && (section[k] as string).trim() !== ''; k++) {
      items++;
      if (removedAt.has(k)) gone++;
    }
    if (items > 0 && gone === items) {
      out[i] = null;
      changes.push({ at: i, change: { from: line, to: null, reason: 'it labels a block whose every item contradicted the lane and went' } });
    }
  }
  let lines = out.filter((l): l is string => l !== null);
  // No two blank lines in a row where lines went, none right after the heading, none at the end.
  lines = lines.filter((l, k) => !(l.trim() === '' && (k === 1 || (lines[k - 1] as string).trim() === '')));
  while (lines.length > 1 && (lines[lines.length - 1] as string).trim() === '') lines.pop();
  const body = lines.slice(1).some((l) => l.trim() !== '');
  const headingChange: ResearchLineChange = body
    ? { from: heading, to: LORE_USE_HEADING, reason: 'in coordinator_scoped_retrieval the responder does not research; the section keeps its lines on how lore is used' }
    : { from: heading, to: null, reason: 'in coordinator_scoped_retrieval the responder does not research, and every line of the section contradicted the lane' };
  return { lines: body ? lines : [], changes: [headingChange, ...changes.sort((a, b) => a.at - b.at).map((c) => c.change)] };
}
