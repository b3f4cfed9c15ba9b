/**
 * Recognise coverage inputs and pull the lore refs out of them.
 *
 * {@link recogniseArtifact} is pure (file name + text in, plain data out); {@link readArtifacts} does the
 * file-system walk for the CLI. A file is recognised by its `schema_version` first and by its shape
 * second; anything else is *skipped with a reason*, never dropped silently and never fatal.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join, posix, relative, resolve, sep } from 'node:path';
import type { ArtifactKind, ArtifactSet, CorpusSubjectRole, CoverageArtifact, RefOccurrence, SkippedInput } from './types.js';
import { COVERAGE_SCHEMA_VERSION } from './types.js';
import { LOCK_SCHEMA_VERSION } from '../receipts/lock.js';
import { nonFiniteLedgerLine } from '../receipts/ledger.js';
import { parseStrictJson } from '../contracts/json-input.js';
import { isLoretraceError } from '../errors.js';
import { isJsonObject } from '../contracts/json-object.js';

type Obj = Record<string, unknown>;

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

/** RFC 6901 escaping of one pointer segment. */
const seg = (s: string | number): string => String(s).replace(/~/g, '~0').replace(/\//g, '~1');

/** Split a `source_ref` that holds several refs (`a; b`) into its trimmed, non-empty parts. */
export function splitRefList(value: string): string[] {
  return value.split(';').map((p) => p.trim()).filter((p) => p.length > 0);
}

/**
 * Ledger tools whose results are lore that was read (see docs/COVERAGE.md): the proxy's `lore_read` and
 * the `read` records `loretrace retrieve` writes for the chunks its walk excerpted (src/receipts/retrieve-ledger.ts).
 * `lore_search`/`search` hits, `lore_links` targets and `lore_follow` admissions are candidates, not reads,
 * just as `ledger export` makes one research_trace entry per read.
 */
const LEDGER_READING_TOOLS = new Set(['lore_read', 'read']);

/** The kinds recognised, in words, for "expected" messages. */
const EXPECTED =
  'a responder packet, responder output capture, loretrace traverse result, capture fragment, ' +
  'proxy ledger (JSONL), lore-grounding digest or Ghostlight corpus coverage ledger (by schema_version or shape)';

/**
 * The strict JSON reader's parse (`parseStrictJson`, src/contracts/json-input.ts — the one every input uses):
 * a syntax error names its reason, line and column in one line; a duplicate key, a number beyond the largest double,
 * an unsafe integer or a `__proto__` key is refused with the reader's message and code (`duplicate_key`,
 * `non_finite_number`, `unsafe_integer`, `proto_key`).
 */
function parseJson(file: string, text: string): { ok: true; value: unknown } | { ok: false; message: string; code: string } {
  try {
    return { ok: true, value: parseStrictJson(text, file) };
  } catch (e) {
    if (!isLoretraceError(e)) throw e;
    // Text that parses but holds what a reader would lose (a key twice, 1e400, …): the reader's own message and code.
    if (['duplicate_key', 'non_finite_number', 'unsafe_integer', 'proto_key'].includes(e.code)) return { ok: false, message: `${e.message} [${e.code}]`, code: e.code };
    // `<file> is not JSON: <reason> at line L, column C` → `<file>: not JSON at line L, column C: <reason>`.
    const m = / is not JSON: (.*) at (line \d+, column \d+)$/s.exec(e.message);
    const detail = m ? ` at ${m[2]}: ${m[1]}` : `: ${e.message}`;
    return { ok: false, message: `${file}: not JSON${detail}; expected ${EXPECTED}`, code: e.code };
  }
}

/** A JSON value in words, for messages: `null`, `a number`, `an array`, `an empty string`, … */
function kindWord(v: unknown): string {
  if (v === undefined) return 'absent';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return v.trim() === '' ? 'an empty string' : 'a string';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** A JSON value as shown in a report (at most 80 characters). */
function shown(v: unknown): string {
  const t = v === undefined ? 'absent' : JSON.stringify(v);
  return t.length > 80 ? t.slice(0, 79) + '…' : t;
}

/** An occurrence for an entry that is not a ref (reported in `rejected_refs`). */
function notARef(role: RefOccurrence['role'], pointer: string, value: unknown, reason: string): RefOccurrence {
  return { role, pointer, ref: shown(value), not_a_ref: reason };
}

/**
 * Put the explicit range of `node` on `occ`: both integers → `line_start`/`line_end`; either present but
 * not both integers → `bad_range`; both absent → nothing (the ref's own range applies). With
 * `singleLine`, an integer `line_start` alone means that one line (digests).
 */
function setRange(occ: RefOccurrence, node: Obj, singleLine = false): boolean {
  const { line_start: a, line_end: b } = node;
  if (isInt(a) && isInt(b)) {
    occ.line_start = a;
    occ.line_end = b;
    return true;
  }
  if (singleLine && isInt(a) && b === undefined) {
    occ.line_start = a;
    occ.line_end = a;
    return true;
  }
  if (a !== undefined || b !== undefined) occ.bad_range = `line_start ${shown(a)}, line_end ${shown(b)}`;
  return false;
}

/** Reject a list field that is present but not an array (nothing inside it can be read). */
function notAList(list: unknown, role: RefOccurrence['role'], pointer: string, out: RefOccurrence[]): boolean {
  if (list === undefined || Array.isArray(list)) return false;
  out.push(notARef(role, pointer, list, `${pointer.slice(pointer.lastIndexOf('/') + 1)} is ${kindWord(list)}; expected an array`));
  return true;
}

/** A `trace_id` that names its ledger record: `<ledger_id>:<seq>` then `.<n>` (the n-th range of it) and `:<hash>`. */
const TRACE_RECORD = /^(lt-[0-9a-f]+:\d+)(?:\.\d+)?:[0-9a-f]+$/;

function refsFromTraceEntry(entry: unknown, pointer: string, out: RefOccurrence[]): void {
  if (!isJsonObject(entry)) {
    out.push(notARef('research_trace', pointer, entry, `research_trace entry is ${kindWord(entry)}; expected an object with source_ref`));
    return;
  }
  const ref = typeof entry.source_ref === 'string' && entry.source_ref.trim() ? entry.source_ref.trim()
    : typeof entry.source_path === 'string' && entry.source_path.trim() ? entry.source_path.trim() : null;
  if (ref === null) {
    out.push(notARef('research_trace', pointer, entry, `research_trace entry has no source_ref or source_path string (source_ref is ${kindWord(entry.source_ref)})`));
    return;
  }
  const occ: RefOccurrence = { role: 'research_trace', pointer, ref };
  if (setRange(occ, entry) && entry.origin === 'runner_captured' && typeof entry.extracted_constraint === 'string') {
    occ.verbatim_text = entry.extracted_constraint;
  }
  // A trace id names the ledger record that served the entry (`<ledger_id>:<seq>[.<n>]:<hash>`).
  const lookup = typeof entry.trace_id === 'string' ? TRACE_RECORD.exec(entry.trace_id) : null;
  if (lookup !== null) occ.lookup = lookup[1];
  out.push(occ);
}

function refList(list: unknown, role: RefOccurrence['role'], pointer: string, out: RefOccurrence[]): void {
  if (notAList(list, role, pointer, out) || !Array.isArray(list)) return;
  list.forEach((item, i) => {
    const parts = typeof item === 'string' ? splitRefList(item) : [];
    if (parts.length === 0) {
      out.push(notARef(role, `${pointer}/${i}`, item, `${pointer.slice(pointer.lastIndexOf('/') + 1)} item is ${kindWord(item)}; expected a lore ref string`));
      return;
    }
    for (const part of parts) out.push({ role, pointer: `${pointer}/${i}`, ref: part });
  });
}

function excerptRefs(list: unknown, pointer: string, out: RefOccurrence[]): void {
  if (notAList(list, 'source_excerpt', pointer, out) || !Array.isArray(list)) return;
  list.forEach((ex, i) => {
    const parts = isJsonObject(ex) && typeof ex.source_ref === 'string' ? splitRefList(ex.source_ref) : [];
    if (parts.length === 0) {
      const why = isJsonObject(ex) ? `source_ref is ${kindWord(ex.source_ref)}` : `the excerpt is ${kindWord(ex)}`;
      out.push(notARef('source_excerpt', `${pointer}/${i}${isJsonObject(ex) ? '/source_ref' : ''}`, isJsonObject(ex) ? ex.source_ref : ex, `source excerpt without a ref: ${why}; expected a source_ref string`));
      return;
    }
    // The excerpt's text locates the exact lines it quotes; with several refs in one source_ref it cannot be attributed to one.
    const text = isJsonObject(ex) && typeof ex.text === 'string' && ex.text.trim() !== '' && parts.length === 1 ? ex.text : undefined;
    for (const part of parts) out.push({ role: 'source_excerpt', pointer: `${pointer}/${i}/source_ref`, ref: part, ...(text !== undefined ? { excerpt_text: text } : {}) });
  });
}

function traceRefs(list: unknown, pointer: string, out: RefOccurrence[]): void {
  if (notAList(list, 'research_trace', pointer, out) || !Array.isArray(list)) return;
  list.forEach((entry, i) => refsFromTraceEntry(entry, `${pointer}/${i}`, out));
}

/** consulted_refs, followed_refs, research_trace of an object at `pointer` (a lore_access block, a fragment, a traverse result). */
function loreAccessRefs(block: Obj, pointer: string, out: RefOccurrence[], fallback?: { block: Obj; pointer: string }): void {
  // A field present in `block` is read (a non-array is reported); an absent one falls back.
  for (const [field, role] of [['consulted_refs', 'consulted_ref'], ['followed_refs', 'followed_ref']] as const) {
    if (block[field] !== undefined) refList(block[field], role, `${pointer}/${field}`, out);
    else if (fallback) refList(fallback.block[field], role, `${fallback.pointer}/${field}`, out);
  }
  if (block.research_trace !== undefined) traceRefs(block.research_trace, `${pointer}/research_trace`, out);
  else if (fallback) traceRefs(fallback.block.research_trace, `${fallback.pointer}/research_trace`, out);
}

function snapshotOf(v: Obj): string | null {
  return typeof v.snapshot_id === 'string' && v.snapshot_id ? v.snapshot_id : null;
}

/**
 * Result objects inside a ledger record's outcome: objects with a string `ref` (or `source_ref`), found
 * depth-first (array items in order, object keys in code-unit order). Iterative, so a hostile, deeply
 * nested outcome cannot overflow the call stack.
 */
function ledgerResults(root: unknown, rootPointer: string, out: RefOccurrence[], line: number, lookup: { lookup?: string; read_scope?: 'note' | 'section' } = {}): void {
  const stack: { node: unknown; pointer: string }[] = [{ node: root, pointer: rootPointer }];
  while (stack.length > 0) {
    const { node, pointer } = stack.pop()!;
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push({ node: node[i]!, pointer: `${pointer}/${i}` });
      continue;
    }
    if (!isJsonObject(node)) continue;
    const ref = typeof node.ref === 'string' ? node.ref : typeof node.source_ref === 'string' ? node.source_ref : null;
    if (ref !== null && ref.trim()) {
      const occ: RefOccurrence = { role: 'ledger_result', pointer, record_line: line, ref: ref.trim(), ...lookup };
      if (setRange(occ, node)) {
        if (typeof node.text === 'string') occ.verbatim_text = node.text;
        else {
          // Seed 004: a record carries payload hashes, not payloads.
          const h = typeof node.text_sha256 === 'string' ? node.text_sha256 : typeof node.sha256 === 'string' ? node.sha256 : null;
          if (h !== null && /^[0-9a-f]{64}$/.test(h)) occ.text_sha256 = h;
        }
      }
      out.push(occ);
      continue;
    }
    const keys = Object.keys(node).sort();
    for (let i = keys.length - 1; i >= 0; i--) stack.push({ node: node[keys[i]!], pointer: `${pointer}/${seg(keys[i]!)}` });
  }
}

/** True when a ledger outcome records a refusal rather than returned lore. */
function isRefusal(outcome: unknown): boolean {
  if (!isJsonObject(outcome)) return false;
  if (outcome.refused === true || outcome.admitted === false || outcome.ok === false) return true;
  if (typeof outcome.status === 'string' && /refus|error|denied/.test(outcome.status)) return true;
  return 'refusal' in outcome || 'error' in outcome;
}

/**
 * The lane whose runner wrote a ledger, named by its first record's session: `retrieve_ledger` for the
 * coordinator lane's (`session.runner: "retrieve"`, or mode `coordinator_scoped_retrieval`), else
 * `proxy_ledger` (a `serve` session's; v1 ledgers, written only by the proxy, name no runner).
 */
function ledgerLane(first: Obj): 'proxy_ledger' | 'retrieve_ledger' {
  const session = first.session;
  if (!isJsonObject(session)) return 'proxy_ledger';
  return session.runner === 'retrieve' || session.mode === 'coordinator_scoped_retrieval' ? 'retrieve_ledger' : 'proxy_ledger';
}

/**
 * What a `lore_read` call's ref asked for: `note` (no fragment), `section` (`#Heading`), or null for lines,
 * a block, a chunk (`#L3-L5`, `#^id`, `#chunk2`) or no ref at all.
 */
function readScope(ref: string | undefined): 'note' | 'section' | null {
  if (ref === undefined || ref.trim() === '') return null;
  const hash = ref.indexOf('#');
  if (hash < 0) return 'note';
  const fragment = ref.slice(hash + 1);
  return /^(?:chunk\d+|L\d+(?:-L?\d+)?|\^.*)$/.test(fragment) ? null : 'section';
}

function recogniseLedger(file: string, text: string): CoverageArtifact | SkippedInput {
  const lines = text.split(/\r\n|\r|\n/);
  const records: { line: number; value: Obj }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!.trim();
    if (!l) continue;
    const parsed = parseJson(file, l);
    // A number beyond the largest double is refused as every ledger reader refuses it, naming this file's line.
    const infinite = !parsed.ok && parsed.code === 'non_finite_number' ? nonFiniteLedgerLine(lines[i]!, i, file) : null;
    if (infinite !== null) return { file, reason: 'not_json', message: `${infinite.message} [non_finite_number]` };
    if (!parsed.ok) {
      return { file, reason: 'not_json', message: `${file}: line ${i + 1} is not a JSON record (${parsed.message.replace(/^.*?not JSON(?: at line \d+, column \d+)?: /, '').replace(/; expected .*$/, '')}); expected one JSON object per line` };
    }
    if (!isJsonObject(parsed.value)) return { file, reason: 'unrecognised', message: `${file}: line ${i + 1} is not a JSON object; expected one ledger record per line` };
    records.push({ line: i + 1, value: parsed.value });
  }
  if (records.length === 0) return { file, reason: 'unrecognised', message: `${file}: empty JSONL file; expected proxy ledger records` };
  const isLedger = records.every((r) => isInt(r.value.seq) && ('record_hash' in r.value || 'prev_hash' in r.value));
  if (!isLedger) {
    return { file, reason: 'unrecognised', message: `${file}: JSONL records without seq/prev_hash/record_hash; expected a loretrace proxy ledger` };
  }
  const refs: RefOccurrence[] = [];
  let snapshot: string | null = null;
  let schemaVersion: string | null = null;
  // What each call asked for (`arguments.ref`), by record id, so a result knows whether it read a whole note or section.
  const asked = new Map<string, string>();
  for (const { value } of records) {
    const args = value.arguments ?? value.args;
    // A read given line_start/line_end asked for those lines, whatever its ref.
    if (typeof value.record_id === 'string' && isJsonObject(args) && typeof args.ref === 'string' && args.line_start === undefined && args.line_end === undefined) asked.set(value.record_id, args.ref);
  }
  for (const { line, value } of records) {
    if (schemaVersion === null && typeof value.schema_version === 'string') schemaVersion = value.schema_version;
    if (snapshot === null) {
      snapshot = snapshotOf(value);
      if (snapshot === null) for (const k of Object.keys(value).sort()) { const v = value[k]; if (isJsonObject(v) && snapshotOf(v)) { snapshot = snapshotOf(v); break; } }
    }
    const tool = typeof value.tool === 'string' ? value.tool : null;
    if (tool === null || !LEDGER_READING_TOOLS.has(tool)) continue;
    const outcome = value.outcome ?? value.result;
    if (outcome === undefined || isRefusal(outcome)) continue;
    const lookup: { lookup?: string; read_scope?: 'note' | 'section' } = {};
    if (typeof value.record_id === 'string') lookup.lookup = value.record_id;
    const scope = typeof value.call_record_id === 'string' ? readScope(asked.get(value.call_record_id)) : null; // asked: see above
    if (scope !== null) lookup.read_scope = scope;
    ledgerResults(outcome, value.outcome !== undefined ? '/outcome' : '/result', refs, line, lookup);
  }
  return { file, kind: ledgerLane(records[0]!.value), schema_version: schemaVersion, snapshot_id: snapshot, refs };
}

/**
 * True for the `--json` summary a loretrace command prints (`retrieve`, `verify-trace`, `index`, …): an
 * `ok` flag next to `written` or `stats`. Its `source_refs` list repeats the packet's excerpt refs, so
 * reading it as a lore-grounding digest would count the same citations twice.
 */
function isLoretraceSummary(v: Obj): boolean {
  return typeof v.ok === 'boolean' && (isJsonObject(v.stats) || Array.isArray(v.written) || isJsonObject(v.written) || isJsonObject(v.totals));
}

/** The fixtures and subjects of a Ghostlight corpus coverage ledger (`entries[]`); malformed entries are left out. */
function corpusInput(v: Obj): NonNullable<CoverageArtifact['corpus']> {
  const fixtures: NonNullable<CoverageArtifact['corpus']>['fixtures'] = [];
  for (const e of Array.isArray(v.entries) ? v.entries : []) {
    if (!isJsonObject(e) || typeof e.fixture_id !== 'string' || e.fixture_id.trim() === '') continue;
    const subjects: { name: string; role: CorpusSubjectRole }[] = [];
    const add = (x: unknown, role: CorpusSubjectRole): void => {
      if (typeof x === 'string' && x.trim()) subjects.push({ name: x.trim(), role });
    };
    for (const x of Array.isArray(e.primary_subjects) ? e.primary_subjects : []) add(x, 'primary');
    for (const x of Array.isArray(e.secondary_subjects) ? e.secondary_subjects : []) add(x, 'secondary');
    add(e.flashpoint, 'flashpoint');
    fixtures.push({ fixture_id: e.fixture_id, status: typeof e.status === 'string' ? e.status : null, subjects });
  }
  return { coverage_id: typeof v.coverage_id === 'string' ? v.coverage_id : null, fixtures };
}

/**
 * The fields Ghostlight's output contract requires of a responder's answer (a packet's
 * `/output_contract/required_fields`, response schema `ghostlight.responder_output.v0.parsed_output`).
 */
const RAW_OUTPUT_FIELDS = ['responder_agent_id', 'action_label', 'visible_action', 'spoken_text', 'private_interpretation', 'intended_effect', 'state_update_candidates', 'relationship_update_candidates', 'unresolved_hooks'];

function kindOf(v: Obj): ArtifactKind | { skip: string } | null {
  const sv = typeof v.schema_version === 'string' ? v.schema_version : '';
  if (sv === COVERAGE_SCHEMA_VERSION) return { skip: 'a loretrace coverage report (output of this command), not an input' };
  if (sv.startsWith('ghostlight.responder_packet')) return 'responder_packet';
  if (sv.startsWith('ghostlight.responder_output')) return 'responder_capture';
  if (/traverse[_-]result/.test(sv)) return 'traverse_result';
  if (/capture[_-]fragment/.test(sv)) return 'capture_fragment';
  if (/lore[_-]grounding/.test(sv)) return 'lore_grounding_digest';
  if (sv.startsWith('ghostlight.projected_local_context')) {
    return { skip: 'a Ghostlight projected local context: its runtime_retrieval_requirements are queries, not lore citations' };
  }
  if (sv === LOCK_SCHEMA_VERSION) return { skip: 'a loretrace lock file: it lists the sha256 of a run\'s files, not lore citations (check it with `loretrace lock verify`)' };
  if (sv.startsWith('ghostlight.corpus_coverage')) return 'corpus_coverage_ledger';
  if (sv.startsWith('loretrace.') || isLoretraceSummary(v)) {
    return { skip: "loretrace's own command output (a --json summary or report), not a lore artifact: its citations are in the files it wrote; pass those" };
  }
  if (typeof v.$schema === 'string') return { skip: 'a JSON Schema document, not an artifact' };
  // A responder's raw output (`capture --raw-output`): its lore claims are unchecked until `capture` holds them
  // to the receipts, and the capture built from it carries them, so reading both would count them twice.
  if (v.schema_version === undefined && RAW_OUTPUT_FIELDS.every((k) => k in v)) {
    return { skip: 'a responder raw output (the fields of the packet\'s output contract): its lore claims are counted from the capture `loretrace capture` builds from it; pass the capture' };
  }
  // Shapes, when schema_version does not say.
  if (isJsonObject(v.visible_context) && isJsonObject(v.lore_access)) return 'responder_packet';
  if (isJsonObject(v.lore_access) && ('raw_output' in v || 'parsed_output' in v)) return 'responder_capture';
  if (Array.isArray(v.decisions) && Array.isArray(v.research_trace) && Array.isArray(v.source_excerpts)) return 'traverse_result';
  if (typeof v.mode === 'string' && Array.isArray(v.consulted_refs)) return 'capture_fragment';
  if (Array.isArray(v.source_refs) && v.source_refs.some((r) => typeof r === 'string' || (isJsonObject(r) && typeof r.path === 'string'))) {
    return 'lore_grounding_digest';
  }
  return null;
}

/**
 * Recognise one input file from its text and extract its lore ref occurrences. Pure.
 *
 * Recognised by `schema_version` (`ghostlight.responder_packet.*`, `ghostlight.responder_output.*`,
 * `*traverse_result*`, `*capture_fragment*`, `*lore_grounding*`) or, failing that, by shape; a file
 * named `*.jsonl` (or whose text is not one JSON value but one JSON object per line) is read as a proxy
 * ledger. A UTF-8 BOM is ignored. Never throws: an unusable input comes back as a {@link SkippedInput}
 * whose `message` names the file, the line/column or pointer, and what was expected.
 *
 * Fields read per kind (pointers in {@link RefOccurrence.pointer}):
 * packet `/visible_context/source_excerpts/i/source_ref` (split at `;`); capture
 * `/lore_access/{consulted_refs,followed_refs,research_trace}` (each falling back to `/parsed_output/…`
 * when `lore_access` lacks it); traverse result and capture fragment: the same three at top level plus
 * `/source_excerpts`; ledger: the returned ranges of `lore_read` records that were not refused (`/outcome/returned/i`, with their `text`);
 * digest `/source_refs/i` (`path` or `ref`, with `line_start`/`line_end`).
 *
 * @param file the name shown in the report.
 * @param text the file's text (UTF-8 decoded).
 */
export function recogniseArtifact(file: string, text: string): CoverageArtifact | SkippedInput {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.trim() === '') return { file, reason: 'not_json', message: `${file}: empty file; expected ${EXPECTED}` };
  const parsed = parseJson(file, body);
  if (!parsed.ok) {
    const looksJsonl = /\.jsonl$/i.test(file) || /^\s*\{[^\n]*\}\s*\r?\n\s*\{/.test(body);
    if (looksJsonl) return recogniseLedger(file, body);
    return { file, reason: 'not_json', message: parsed.message };
  }
  if (/\.jsonl$/i.test(file)) return recogniseLedger(file, body);
  const v = parsed.value;
  if (!isJsonObject(v)) {
    return { file, reason: 'unrecognised', message: `${file}: top level is ${Array.isArray(v) ? 'an array' : v === null ? 'null' : `a ${typeof v}`}; expected a JSON object: ${EXPECTED}` };
  }
  // A ledger holding only its first record parses as one JSON object whatever the file is called.
  if (isInt(v.seq) && ('record_hash' in v || 'prev_hash' in v) && typeof v.kind === 'string') return recogniseLedger(file, body);
  const kind = kindOf(v);
  if (kind === null) {
    const keys = Object.keys(v).slice(0, 6).join(', ');
    return { file, reason: 'unrecognised', message: `${file}: unrecognised JSON (schema_version ${typeof v.schema_version === 'string' ? JSON.stringify(v.schema_version) : 'absent'}; keys ${keys}${Object.keys(v).length > 6 ? ', …' : ''}); expected ${EXPECTED}` };
  }
  if (typeof kind === 'object') return { file, reason: 'no_lore_refs', message: `${file}: ${kind.skip}` };
  const refs: RefOccurrence[] = [];
  switch (kind) {
    case 'responder_packet':
      if (isJsonObject(v.visible_context)) excerptRefs(v.visible_context.source_excerpts, '/visible_context/source_excerpts', refs);
      break;
    case 'responder_capture': {
      const la = isJsonObject(v.lore_access) ? v.lore_access : {};
      loreAccessRefs(la, '/lore_access', refs, isJsonObject(v.parsed_output) ? { block: v.parsed_output, pointer: '/parsed_output' } : undefined);
      break;
    }
    case 'traverse_result':
    case 'capture_fragment':
      excerptRefs(v.source_excerpts, '/source_excerpts', refs);
      loreAccessRefs(v, '', refs);
      break;
    case 'lore_grounding_digest':
      if (!notAList(v.source_refs, 'digest_source_ref', '/source_refs', refs) && Array.isArray(v.source_refs)) {
        v.source_refs.forEach((r, i) => {
          const pointer = `/source_refs/${i}`;
          const parts = typeof r === 'string' ? splitRefList(r) : [];
          if (parts.length > 0) {
            for (const part of parts) refs.push({ role: 'digest_source_ref', pointer, ref: part });
            return;
          }
          const ref = !isJsonObject(r) ? null : typeof r.path === 'string' ? r.path : typeof r.ref === 'string' ? r.ref : typeof r.source_ref === 'string' ? r.source_ref : null;
          if (ref === null || !ref.trim()) {
            refs.push(notARef('digest_source_ref', pointer, r, isJsonObject(r) ? `source_refs item has no path (path is ${kindWord(r.path)}); expected { path, line_start, line_end }` : `source_refs item is ${kindWord(r)}; expected { path, line_start, line_end }`));
            return;
          }
          const occ: RefOccurrence = { role: 'digest_source_ref', pointer, ref: ref.trim() };
          setRange(occ, r as Obj, true);
          refs.push(occ);
        });
      }
      break;
    case 'proxy_ledger':
    case 'retrieve_ledger':
      break;
    case 'corpus_coverage_ledger':
      return { file, kind, schema_version: typeof v.schema_version === 'string' ? v.schema_version : null, snapshot_id: null, refs, corpus: corpusInput(v) };
  }
  return { file, kind, schema_version: typeof v.schema_version === 'string' ? v.schema_version : null, snapshot_id: snapshotOf(v), refs };
}

/** True when `x` is a {@link SkippedInput} rather than a recognised artifact. */
export function isSkipped(x: CoverageArtifact | SkippedInput): x is SkippedInput {
  return 'reason' in x;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Options for {@link readArtifacts}. */
export interface ReadArtifactsOptions {
  /** Directory relative inputs are resolved against; default `process.cwd()`. Report names do not depend on it. */
  cwd?: string;
}

/**
 * The report name of an input as the caller wrote it: POSIX separators, `.`/`..` segments and a trailing
 * `/` normalised away (`./a/../b.json` → `b.json`, `/tmp/x/` → `/tmp/x`); absolute stays absolute,
 * relative stays relative. So the same arguments give the same names from any working directory.
 */
function inputName(input: string): string {
  const p = posix.normalize(input.split(sep).join('/'));
  return p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p;
}

/**
 * Files under `dir` (sorted, recursive). Entries that are neither a folder nor a regular file — symbolic
 * links (never followed inside a folder: no loops, no escape), FIFOs, sockets, devices — are returned in
 * `other` with what they are, so the caller lists them as skipped instead of dropping them silently.
 */
async function walk(dir: string, other: { path: string; what: string }[] = []): Promise<string[]> {
  const out: string[] = [];
  const entries = await readdir(dir, { withFileTypes: true });
  for (const e of entries.sort((a, b) => cmp(a.name, b.name))) {
    if (e.name.startsWith('.') || e.name === 'node_modules') continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(p, other)));
    else if (e.isFile()) out.push(p);
    else other.push({ path: p, what: e.isSymbolicLink() ? 'a symbolic link (not followed inside a folder; name its target on the command line to read it)' : e.isFIFO() ? 'a FIFO, not a regular file' : e.isSocket() ? 'a socket, not a regular file' : 'a device, not a regular file' });
  }
  return out;
}

/** What a non-regular input is, for the skipped entry (`null` for a regular file). */
function notRegular(st: { isFile(): boolean; isFIFO(): boolean; isSocket(): boolean }): string | null {
  if (st.isFile()) return null;
  return st.isFIFO() ? 'a FIFO, not a regular file' : st.isSocket() ? 'a socket, not a regular file' : 'a device, not a regular file';
}

/**
 * Read artifact files and folders (folders recursively; dot-entries and `node_modules` skipped; inside a
 * folder only `*.json` and `*.jsonl` are read, other files are listed as `unsupported_extension`, and JSON
 * of no known kind is `not_an_artifact` where a named file would be `unrecognised`). Each
 * file is read as UTF-8 and passed to {@link recogniseArtifact}; a file named twice is read once.
 * Missing inputs (`not_found`), unreadable files, FIFOs, devices and (inside folders) symbolic links
 * (`unreadable`, never opened or followed) and folders holding no files at all (`empty_folder`) become
 * skipped entries — this function does not throw for bad inputs.
 *
 * Output lists are sorted by `file` (code-unit order). Names are the inputs as written (normalised, POSIX
 * separators; see `inputName`) followed by the path inside a folder, so the report does not depend on the
 * working directory: `lore-fixtures/artifacts` gives `lore-fixtures/artifacts/capture.harbor.json`,
 * `/tmp/run/art` gives `/tmp/run/art/packet.json`.
 */
export async function readArtifacts(inputs: readonly string[], options: ReadArtifactsOptions = {}): Promise<ArtifactSet> {
  const cwd = options.cwd ?? process.cwd();
  const artifacts: CoverageArtifact[] = [];
  const skipped: SkippedInput[] = [];
  const seen = new Set<string>();
  const files: { abs: string; name: string; explicit: boolean }[] = [];
  for (const input of inputs) {
    const abs = resolve(cwd, input);
    const shown = inputName(input);
    let st;
    try {
      st = await stat(abs);
    } catch {
      skipped.push({ file: shown, reason: 'not_found', message: `${shown}: no such file or folder; expected an artifact file or a folder of artifacts` });
      continue;
    }
    if (st.isDirectory()) {
      const other: { path: string; what: string }[] = [];
      const found = await walk(abs, other);
      for (const o of other) {
        const name = posix.join(shown, relative(abs, o.path).split(sep).join('/'));
        skipped.push({ file: name, reason: 'unreadable', message: `${name}: is ${o.what}; expected an artifact file` });
      }
      if (found.length === 0 && other.length === 0) {
        skipped.push({ file: shown, reason: 'empty_folder', message: `${shown}: folder holds no files; expected artifact files (*.json, *.jsonl)` });
      }
      for (const f of found) files.push({ abs: f, name: posix.join(shown, relative(abs, f).split(sep).join('/')), explicit: false });
    } else if (notRegular(st) !== null) {
      // Never opened: /dev/zero would never end, a FIFO would block.
      skipped.push({ file: shown, reason: 'unreadable', message: `${shown}: is ${notRegular(st)}; expected an artifact file` });
    } else {
      files.push({ abs, name: shown, explicit: true });
    }
  }
  for (const { abs, name, explicit } of files) {
    if (seen.has(abs)) continue;
    seen.add(abs);
    const ext = extname(abs).toLowerCase();
    if (!explicit && ext !== '.json' && ext !== '.jsonl') {
      skipped.push({ file: name, reason: 'unsupported_extension', message: `${name}: not a .json or .jsonl file; name it on the command line to read it anyway` });
      continue;
    }
    let text: string;
    try {
      const bytes = await readFile(abs);
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch (e) {
      const why = e instanceof TypeError ? 'not valid UTF-8' : e instanceof Error ? e.message : String(e);
      skipped.push({ file: name, reason: 'unreadable', message: `${name}: cannot be read (${why}); expected a UTF-8 JSON file` });
      continue;
    }
    const r = recogniseArtifact(name, text);
    // A folder holds whatever a run left beside its artifacts (MCP transcripts, answers files): a JSON file of
    // no known kind found there is listed and counted, not a failure; named on the command line it is one.
    if (isSkipped(r) && r.reason === 'unrecognised' && !explicit) {
      skipped.push({ file: name, reason: 'not_an_artifact', message: `${r.message.replace(/; expected .*$/s, '')}; not a loretrace or Ghostlight artifact, found in a folder: not counted (name it on the command line to have it checked)` });
    } else if (isSkipped(r)) skipped.push(r);
    else artifacts.push(r);
  }
  artifacts.sort((a, b) => cmp(a.file, b.file));
  skipped.sort((a, b) => cmp(a.file, b.file) || cmp(a.reason, b.reason) || cmp(a.message, b.message));
  // A file reached twice (named and inside a named folder) is listed once.
  const unique = skipped.filter((x, i) => i === 0 || x.file !== skipped[i - 1]!.file || x.reason !== skipped[i - 1]!.reason || x.message !== skipped[i - 1]!.message);
  return { artifacts, skipped: unique };
}
