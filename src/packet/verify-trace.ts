/**
 * Trace verification (issue 4, "Trace verification"): check every `research_trace` entry of a capture,
 * a capture fragment, a traverse result or a proxy ledger export line by line against the vault as it is
 * now, and return a bundle that records what was checked — one disposition per entry and totals for every
 * disposition, zeros included (seed 003: an omitted total is indistinguishable from zero).
 *
 * Pure over its inputs apart from re-reading the cited notes through `readNoteLines` (which checks each
 * file's sha256 against the index manifest). Never prints, never exits.
 */
import { LoretraceError } from '../errors.js';
import type { Chunk, NoteRecord, VaultIndex } from '../types.js';
import { readNoteLines } from '../indexer/lookup.js';
import { sliceLines } from '../notes/lines.js';
import { parseRef } from '../refs/ref.js';
import type { ResearchTraceEntry, TraceOrigin } from './types.js';


/**
 * Outcome of checking one trace entry. Checks run in this order and the first failure decides:
 * 1. `missing_file` — the source_ref does not parse, names another namespace, disagrees with
 *    `source_path`, or the file is not in the current snapshot;
 * 2. `out_of_range` — `line_start < 1`, `line_end < line_start`, `line_end > line_count`, or the range
 *    is not inside a `#Lx-Ly` fragment of the source_ref;
 * 3. `chunk_mismatch` — no chunk `chunk_index` in that file, the line range does not lie inside that
 *    chunk, or a `#chunkN` fragment of the source_ref names another chunk;
 * 4. text — `runner_captured`: `extracted_constraint` must equal the lines verbatim (`verified`, else
 *    `text_mismatch`); other origins: `unverifiable` with a similarity score (never a failure);
 * 5. drift — when the input records a `snapshot_id` different from the vault's now, an entry that failed
 *    any of checks 1-4 is `drifted` instead (its `cause` keeps the failed check); an entry that passed
 *    keeps `verified` ("still holds") and is listed in `snapshot.holding`.
 */
export type TraceDisposition =
  | 'verified'
  | 'text_mismatch'
  | 'out_of_range'
  | 'chunk_mismatch'
  | 'missing_file'
  | 'drifted'
  | 'unverifiable';

/** Every disposition, in the fixed order `totals` uses. */
export const TRACE_DISPOSITIONS: readonly TraceDisposition[] = [
  'verified',
  'text_mismatch',
  'out_of_range',
  'chunk_mismatch',
  'missing_file',
  'drifted',
  'unverifiable',
];

/** The check that failed, recorded as `cause` on a `drifted` entry. */
export type TraceFailure = 'text_mismatch' | 'out_of_range' | 'chunk_mismatch' | 'missing_file';

/**
 * Which kind of document was verified: detected by shape, except `proxy_ledger` — a raw proxy ledger
 * (JSONL) that the caller exported with `exportLedger` first and labels with `options.inputKind`.
 */
export type TraceInputKind = 'capture' | 'capture_fragment' | 'traverse_result' | 'ledger_export' | 'proxy_ledger';

/** The verdict on one trace entry. */
export interface TraceEntryVerdict {
  /** RFC 6901 pointer of the entry inside the input document, e.g. `/lore_access/research_trace/0`. */
  pointer: string;
  trace_id: string;
  origin: TraceOrigin;
  source_ref: string;
  source_path: string;
  chunk_index: number;
  /** 1-based inclusive, as the entry states them. */
  line_start: number;
  line_end: number;
  disposition: TraceDisposition;
  /** For `drifted`: the check that failed against the current vault; otherwise null. */
  cause: TraceFailure | null;
  /**
   * Token containment of `extracted_constraint` in the cited lines, 0..1 rounded to 4 decimals: the
   * share of the constraint's lower-cased letter/digit word tokens (a multiset) that occur in the lines.
   * Null when the text check did not run (an earlier check failed).
   */
  similarity: number | null;
  /** Why the entry is not plainly `verified` (file, lines, what was expected); null for `verified`. */
  detail: string | null;
}

/** The bundle `verifyTrace` returns (`loretrace verify-trace --json` prints it). */
export interface TraceVerificationReport {
  schema_version: 'loretrace.trace_verification.v1';
  /** The input file as the caller named it, or null. */
  file: string | null;
  input_kind: TraceInputKind;
  /** Namespace of the vault checked against. */
  namespace: string;
  snapshot: {
    /** snapshot_id of the vault now. */
    current: string;
    /** snapshot_id the input recorded, or null when it records none (captures usually do not). */
    recorded: string | null;
    /** True when `recorded` is given and differs from `current`. */
    drift: boolean;
    /** Under drift: trace_ids of the entries that still verify verbatim (in input order); else []. */
    holding: string[];
  };
  /** Count per disposition; all seven keys always present. */
  totals: Record<TraceDisposition, number>;
  /** runner_captured entries checked and how many of them did not verify. */
  runner_captured: { checked: number; failed: number };
  /** True when at least one entry was checked and no runner_captured entry failed. */
  ok: boolean;
  entries: TraceEntryVerdict[];
}

/** Options of {@link verifyTrace}. */
export interface VerifyTraceOptions {
  /** Name of the input file, used in messages and copied to `report.file`. */
  file?: string;
  /**
   * `proxy_ledger`: the input is the `exportLedger` export of a raw JSONL ledger (as `loretrace
   * verify-trace session.jsonl` does); reported as `input_kind: 'proxy_ledger'` instead of `ledger_export`.
   */
  inputKind?: 'proxy_ledger';
}

const ORIGINS: readonly TraceOrigin[] = ['runner_captured', 'coordinator_reconstructed', 'responder_reported'];

interface Located {
  pointer: string;
  entry: Record<string, unknown>;
}

/** True for a plain JSON object. */
function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Classify the input document and list its trace arrays with their pointers.
 * - capture (`ghostlight.responder_output.v0`, or an object with `parsed_output` and `lore_access`):
 *   `/lore_access/research_trace` and `/parsed_output/research_trace` (both when present; a capture mirrors
 *   the responder's trace into lore_access, and both copies are checked);
 * - traverse result (`decisions` and `stats` present): `/research_trace`;
 * - ledger export (`loretrace ledger export`: has `ledger_head`; or `schema_version` starting
 *   `loretrace.ledger`, or a `records` array): `/research_trace`,
 *   else every `records[i].trace_entry` / `records[i].research_trace_entry`;
 * - capture fragment (anything else with a top-level `research_trace`).
 */
function locate(doc: unknown, file: string): { kind: TraceInputKind; recorded: string | null; found: Located[] } {
  const where = file || 'input';
  if (!isObject(doc)) {
    throw new LoretraceError(
      'bad_trace_input',
      `${where}: expected a JSON object (a responder output capture, a capture fragment, a traverse result or a ledger export), got ${Array.isArray(doc) ? 'an array' : doc === null ? 'null' : typeof doc}`,
      { file: where, pointer: '', expected: 'a JSON object with a research_trace array' },
    );
  }
  const arrays: { pointer: string; value: unknown }[] = [];
  let kind: TraceInputKind;
  let recorded: unknown = doc['snapshot_id'];
  const schemaVersion = typeof doc['schema_version'] === 'string' ? (doc['schema_version'] as string) : '';
  if (schemaVersion === 'ghostlight.responder_output.v0' || (isObject(doc['parsed_output']) && isObject(doc['lore_access']))) {
    kind = 'capture';
    const la = doc['lore_access'];
    const po = doc['parsed_output'];
    if (isObject(la)) {
      if ('research_trace' in la) arrays.push({ pointer: '/lore_access/research_trace', value: la['research_trace'] });
      if (recorded === undefined) recorded = la['snapshot_id'];
    }
    if (isObject(po) && 'research_trace' in po) arrays.push({ pointer: '/parsed_output/research_trace', value: po['research_trace'] });
  } else if ('decisions' in doc && 'stats' in doc) {
    kind = 'traverse_result';
    if ('research_trace' in doc) arrays.push({ pointer: '/research_trace', value: doc['research_trace'] });
  } else if (schemaVersion.startsWith('loretrace.ledger') || Array.isArray(doc['records']) || typeof doc['ledger_head'] === 'string') {
    kind = 'ledger_export';
    if ('research_trace' in doc) {
      arrays.push({ pointer: '/research_trace', value: doc['research_trace'] });
    } else if (Array.isArray(doc['records'])) {
      const found: Located[] = [];
      (doc['records'] as unknown[]).forEach((rec, i) => {
        if (!isObject(rec)) return;
        for (const key of ['trace_entry', 'research_trace_entry']) {
          if (isObject(rec[key])) found.push({ pointer: `/records/${i}/${key}`, entry: rec[key] as Record<string, unknown> });
        }
      });
      if (found.length > 0 || 'records' in doc) {
        return { kind, recorded: checkSnapshot(recorded, where, '/snapshot_id'), found };
      }
    }
  } else {
    kind = 'capture_fragment';
    if ('research_trace' in doc) arrays.push({ pointer: '/research_trace', value: doc['research_trace'] });
  }
  if (arrays.length === 0) {
    throw new LoretraceError(
      'no_research_trace',
      `${where}: no research_trace to verify (looked at ${kind === 'capture' ? '/lore_access/research_trace and /parsed_output/research_trace' : '/research_trace'}); a packet_only capture has no trace`,
      { file: where, pointer: kind === 'capture' ? '/lore_access/research_trace' : '/research_trace', expected: 'an array of research_trace entries' },
    );
  }
  const found: Located[] = [];
  for (const { pointer, value } of arrays) {
    if (!Array.isArray(value)) {
      throw new LoretraceError('bad_trace_input', `${where}: ${pointer} must be an array of research_trace entries`, {
        file: where,
        pointer,
        expected: 'an array',
      });
    }
    value.forEach((entry, i) => {
      if (!isObject(entry)) {
        throw new LoretraceError('bad_trace_entry', `${where}: ${pointer}/${i} must be a research_trace entry object`, {
          file: where,
          pointer: `${pointer}/${i}`,
          expected: 'an object',
        });
      }
      found.push({ pointer: `${pointer}/${i}`, entry });
    });
  }
  const snapshotPointer = kind === 'capture' && doc['snapshot_id'] === undefined ? '/lore_access/snapshot_id' : '/snapshot_id';
  return { kind, recorded: checkSnapshot(recorded, where, snapshotPointer), found };
}

function checkSnapshot(value: unknown, where: string, pointer: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length === 0) {
    throw new LoretraceError('bad_trace_input', `${where}: ${pointer} must be a non-empty string (a vault snapshot_id)`, {
      file: where,
      pointer,
      expected: 'a snapshot_id string',
    });
  }
  return value;
}

/** The fields of a research_trace entry that verification needs (query and used_for are not checked). */
type CheckedEntry = Omit<ResearchTraceEntry, 'query' | 'used_for'>;

/** Structural check of one entry: the fields verification needs, with their types. Throws `bad_trace_entry`. */
function checkEntry(entry: Record<string, unknown>, pointer: string, where: string): CheckedEntry {
  const fail = (field: string, expected: string): never => {
    const got = entry[field];
    throw new LoretraceError(
      'bad_trace_entry',
      `${where}: ${pointer}/${field} must be ${expected} (got ${got === undefined ? 'nothing' : JSON.stringify(got)})`,
      { file: where, pointer: `${pointer}/${field}`, expected },
    );
  };
  const str = (field: string): string => {
    const v = entry[field];
    return typeof v === 'string' && v.length > 0 ? v : fail(field, 'a non-empty string');
  };
  const int = (field: string, min: number): number => {
    const v = entry[field];
    return typeof v === 'number' && Number.isInteger(v) && v >= min ? v : fail(field, `an integer ≥ ${min}`);
  };
  const origin = entry['origin'];
  if (typeof origin !== 'string' || !(ORIGINS as readonly string[]).includes(origin)) {
    fail('origin', `one of ${ORIGINS.join(', ')}`);
  }
  return {
    trace_id: str('trace_id'),
    origin: origin as TraceOrigin,
    source_ref: str('source_ref'),
    source_path: str('source_path'),
    chunk_index: int('chunk_index', 0),
    line_start: int('line_start', 1),
    line_end: int('line_end', 1),
    extracted_constraint: str('extracted_constraint'),
  };
}

/** Lower-cased letter/digit word tokens (Unicode-aware), NFKC-normalised. */
function tokens(text: string): string[] {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t.length > 0);
}

/**
 * Token containment of `claim` in `source`: |tokens(claim) ∩ tokens(source)| / |tokens(claim)| over
 * multisets, rounded to 4 decimals; 0 when the claim has no tokens. 1 means every word of the claim
 * occurs in the source (as often), which is what a faithful paraphrase or a verbatim quote scores.
 */
export function tokenContainment(claim: string, source: string): number {
  const claimTokens = tokens(claim);
  if (claimTokens.length === 0) return 0;
  const pool = new Map<string, number>();
  for (const t of tokens(source)) pool.set(t, (pool.get(t) ?? 0) + 1);
  let hit = 0;
  for (const t of claimTokens) {
    const n = pool.get(t) ?? 0;
    if (n > 0) {
      hit += 1;
      pool.set(t, n - 1);
    }
  }
  return Math.round((hit / claimTokens.length) * 10000) / 10000;
}

interface Lookup {
  notes: Map<string, NoteRecord>;
  chunks: Map<string, Chunk[]>;
}

function buildLookup(index: VaultIndex): Lookup {
  const notes = new Map<string, NoteRecord>();
  for (const n of index.notes) notes.set(n.path, n);
  const chunks = new Map<string, Chunk[]>();
  for (const c of index.chunks) {
    const list = chunks.get(c.path);
    if (list) list.push(c);
    else chunks.set(c.path, [c]);
  }
  return { notes, chunks };
}

/**
 * Check one entry's location (checks 1-3). Returns the failure with its detail, or the note when the
 * location holds.
 */
function checkLocation(
  e: CheckedEntry,
  index: VaultIndex,
  lookup: Lookup,
): { failure: TraceFailure; detail: string } | { note: NoteRecord } {
  const ns = index.namespace;
  let parsed: ReturnType<typeof parseRef>;
  try {
    parsed = parseRef(e.source_ref, { namespace: ns, label: 'source_ref' });
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    return { failure: 'missing_file', detail: `source_ref does not name a file of vault ${ns}: ${msg}` };
  }
  if (parsed.is_prefix) {
    return { failure: 'missing_file', detail: `source_ref ${JSON.stringify(e.source_ref)} names a folder, not a file` };
  }
  const refPath = parsed.path;
  const sourcePath = e.source_path.startsWith(`${ns}/`) && !lookup.notes.has(e.source_path) ? e.source_path.slice(ns.length + 1) : e.source_path;
  if (sourcePath.normalize('NFC') !== refPath) {
    return {
      failure: 'missing_file',
      detail: `source_ref names ${refPath} but source_path names ${e.source_path}; expected both to name the same file`,
    };
  }
  const note = lookup.notes.get(refPath);
  if (!note) {
    return { failure: 'missing_file', detail: `${refPath} is not in vault ${ns} (snapshot ${index.snapshot_id})` };
  }
  if (e.line_end < e.line_start || e.line_end > note.line_count) {
    return {
      failure: 'out_of_range',
      detail: `lines ${e.line_start}-${e.line_end} are not inside ${refPath}, which has ${note.line_count} line${note.line_count === 1 ? '' : 's'}; expected 1 ≤ line_start ≤ line_end ≤ ${note.line_count}`,
    };
  }
  const frag = parsed.fragment;
  if (frag && frag.kind === 'lines' && (e.line_start < frag.start || e.line_end > frag.end)) {
    return {
      failure: 'out_of_range',
      detail: `lines ${e.line_start}-${e.line_end} are not inside the source_ref's range L${frag.start}-L${frag.end}`,
    };
  }
  const chunk = (lookup.chunks.get(refPath) ?? []).find((c) => c.chunk_index === e.chunk_index);
  if (!chunk) {
    return {
      failure: 'chunk_mismatch',
      detail: `${refPath} has no chunk ${e.chunk_index} (it has ${note.chunk_count} chunk${note.chunk_count === 1 ? '' : 's'})`,
    };
  }
  if (e.line_start < chunk.line_start || e.line_end > chunk.line_end) {
    return {
      failure: 'chunk_mismatch',
      detail: `lines ${e.line_start}-${e.line_end} are not inside chunk ${e.chunk_index} of ${refPath} (lines ${chunk.line_start}-${chunk.line_end})`,
    };
  }
  if (frag && frag.kind === 'chunk' && frag.index !== e.chunk_index) {
    return {
      failure: 'chunk_mismatch',
      detail: `source_ref names chunk ${frag.index} but chunk_index is ${e.chunk_index}`,
    };
  }
  return { note };
}

/**
 * Verify every research_trace entry of `input` against `index` (the vault now).
 *
 * `input` is a parsed JSON document of one of four kinds (detected by shape, see {@link TraceInputKind}):
 * a Ghostlight responder output capture (`lore_access.research_trace` and `parsed_output.research_trace`
 * are both checked), a capture fragment written by `loretrace retrieve --capture-out`, a traverse result
 * (`loretrace traverse --json`), or a proxy ledger export. Source refs may be namespaced
 * (`FixtureLore:World/A.md#chunk1`) or bare vault paths (`World/A.md`); `source_path` is vault-relative
 * (a leading `<namespace>/` is tolerated). Lines are 1-based inclusive; text of a range is the lines
 * joined with "\n" (src/types.ts). The disposition rules are on {@link TraceDisposition}.
 *
 * `ok` is false when no entry was found in the arrays (an empty bundle proves nothing, seed 003) or
 * when any `runner_captured` entry is not `verified`; other origins never make it false.
 *
 * Errors: `bad_trace_input` (not an object, trace not an array, bad snapshot_id), `no_research_trace`
 * (no trace array at all), `bad_trace_entry` (an entry lacks a field or has the wrong type; pointer
 * given), `stale_file` (from `readNoteLines`: a cited file changed since the index was built).
 *
 * @example
 *   const report = await verifyTrace(await indexVault('lore-fixtures/FixtureLore'), fragment, { file: 'frag.json' });
 *   report.totals // { verified: 3, text_mismatch: 0, out_of_range: 0, chunk_mismatch: 0, missing_file: 0, drifted: 0, unverifiable: 0 }
 */
export async function verifyTrace(
  index: VaultIndex,
  input: unknown,
  options: VerifyTraceOptions = {},
): Promise<TraceVerificationReport> {
  const where = options.file ?? '';
  const { kind, recorded, found } = locate(input, where);
  const checked = found.map(({ pointer, entry }) => ({ pointer, e: checkEntry(entry, pointer, where || 'input') }));
  const drift = recorded !== null && recorded !== index.snapshot_id;
  const lookup = buildLookup(index);
  const linesCache = new Map<string, string[]>();
  const entries: TraceEntryVerdict[] = [];

  for (const { pointer, e } of checked) {
    let disposition: TraceDisposition;
    let failure: TraceFailure | null = null;
    let detail: string | null = null;
    let similarity: number | null = null;
    const loc = checkLocation(e, index, lookup);
    if ('failure' in loc) {
      failure = loc.failure;
      detail = loc.detail;
      disposition = loc.failure;
    } else {
      const path = loc.note.path;
      const lines = linesCache.get(path) ?? (await readNoteLines(index, path));
      linesCache.set(path, lines);
      const actual = sliceLines(lines, e.line_start, e.line_end);
      similarity = tokenContainment(e.extracted_constraint, actual);
      const exact = actual === e.extracted_constraint;
      if (e.origin === 'runner_captured') {
        if (exact) {
          disposition = 'verified';
        } else {
          failure = 'text_mismatch';
          disposition = 'text_mismatch';
          detail = `extracted_constraint differs from lines ${e.line_start}-${e.line_end} of ${path} (token containment ${similarity}); expected the lines verbatim, joined with "\\n"`;
        }
      } else {
        disposition = 'unverifiable';
        detail = `${e.origin} entry: location checked, text not held to verbatim (${exact ? 'verbatim match' : `token containment ${similarity}`}); not proof of the research path`;
      }
    }
    let cause: TraceFailure | null = null;
    if (drift && failure !== null) {
      cause = failure;
      disposition = 'drifted';
      detail = `vault changed since the trace was recorded (snapshot ${recorded} → ${index.snapshot_id}): ${detail}`;
    }
    entries.push({
      pointer,
      trace_id: e.trace_id,
      origin: e.origin,
      source_ref: e.source_ref,
      source_path: e.source_path,
      chunk_index: e.chunk_index,
      line_start: e.line_start,
      line_end: e.line_end,
      disposition,
      cause,
      similarity,
      detail,
    });
  }

  const totals = Object.fromEntries(TRACE_DISPOSITIONS.map((d) => [d, 0])) as Record<TraceDisposition, number>;
  for (const v of entries) totals[v.disposition] += 1;
  const runner = entries.filter((v) => v.origin === 'runner_captured');
  const failed = runner.filter((v) => v.disposition !== 'verified').length;
  return {
    schema_version: 'loretrace.trace_verification.v1',
    file: options.file ?? null,
    input_kind: options.inputKind === 'proxy_ledger' && kind === 'ledger_export' ? 'proxy_ledger' : kind,
    namespace: index.namespace,
    snapshot: {
      current: index.snapshot_id,
      recorded,
      drift,
      holding: drift ? entries.filter((v) => v.disposition === 'verified').map((v) => v.trace_id) : [],
    },
    totals,
    runner_captured: { checked: runner.length, failed },
    ok: entries.length > 0 && failed === 0,
    entries,
  };
}
