/**
 * `research_trace` entries: exactly the fields of Ghostlight's `research_trace_entry`
 * (`../shared/ghostlight/schemas/responder-output.schema.json` `$defs`, mirrored in
 * schemas/responder-output.schema.json): `trace_id`, `origin`, `query`, `source_ref`, `source_path`,
 * `chunk_index`, `line_start`, `line_end`, `extracted_constraint`, `used_for` — no more, no less.
 *
 * Seed 001: "`runner_captured`: the runner or retrieval worker captured the lookup as it happened."
 * loretrace builds these entries from the lines it actually read, so `extracted_constraint` is always
 * the verbatim text of `line_start..line_end` (lines joined with `"\n"`), never a summary.
 */
import { LoretraceError } from '../errors.js';
import type { ResearchTraceEntry, TraceOrigin } from '../contracts/types.js';

/** Input of {@link makeTraceEntry}. Lines are 1-based inclusive in the original file. */
export interface TraceEntryInput {
  trace_id: string;
  /** Default `runner_captured`. */
  origin?: TraceOrigin;
  /** The query or lookup text actually used. */
  query: string;
  namespace: string;
  /** Vault-relative path of the note (the index path, NFC: `source_ref` is built from it). */
  path: string;
  /**
   * The note's vault-relative path as its file is named on disk (`notePathOnDisk`, src/indexer/lookup.ts),
   * when it differs from `path` (a file stored under an NFD name): becomes `source_path`, so that
   * `join(vault, source_path)` opens the file. Default `path`.
   */
  disk_path?: string;
  chunk_index: number;
  line_start: number;
  line_end: number;
  /** The verbatim text of the lines (becomes `extracted_constraint`). */
  text: string;
  /** What asked for it: the requirement, trigger, seed or link. */
  used_for: string;
}

/**
 * Build one research_trace entry with exactly Ghostlight's fields, in schema order.
 * `source_ref` = `Namespace:path#chunkN` (the NFC index path: refs match by it); `source_path` = the
 * vault-relative path of the file as named on disk (`disk_path`, else `path`): the path that opens it.
 *
 * @throws LoretraceError `bad_trace` when a string field is empty, `chunk_index` is not an integer ≥ 0,
 *   or the line range is not `1 ≤ line_start ≤ line_end` (Ghostlight requires these; a broken entry is
 *   a bug upstream, so it is refused rather than written).
 */
export function makeTraceEntry(input: TraceEntryInput): ResearchTraceEntry {
  const { line_start, line_end, chunk_index } = input;
  for (const k of ['trace_id', 'query', 'path', 'text', 'used_for'] as const) {
    if (typeof input[k] !== 'string' || input[k].length === 0) {
      throw new LoretraceError('bad_trace', `research_trace entry ${input.trace_id || '(no id)'}: ${k} must be a non-empty string`, { expected: 'a non-empty string' });
    }
  }
  if (!Number.isInteger(chunk_index) || chunk_index < 0) {
    throw new LoretraceError('bad_trace', `research_trace entry ${input.trace_id}: chunk_index must be an integer ≥ 0 (got ${chunk_index})`, { expected: 'an integer ≥ 0' });
  }
  if (!Number.isInteger(line_start) || !Number.isInteger(line_end) || line_start < 1 || line_end < line_start) {
    throw new LoretraceError('bad_trace', `research_trace entry ${input.trace_id}: lines ${line_start}-${line_end} are not a 1-based inclusive range`, { expected: '1 ≤ line_start ≤ line_end' });
  }
  return {
    trace_id: input.trace_id,
    origin: input.origin ?? 'runner_captured',
    query: input.query,
    source_ref: `${input.namespace}:${input.path}#chunk${chunk_index}`,
    source_path: input.disk_path ?? input.path,
    chunk_index,
    line_start,
    line_end,
    extracted_constraint: input.text,
    used_for: input.used_for,
  };
}

/**
 * The index path (vault-relative, NFC) of a research_trace entry's `source_path`, which names the file as
 * stored on disk (see {@link makeTraceEntry}): the key to look the note up in an index. The scan gives
 * every note the NFC form of its on-disk name, so this is `source_path` in NFC.
 */
export function traceNotePath(sourcePath: string): string {
  return sourcePath.normalize('NFC');
}
