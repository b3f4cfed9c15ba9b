/**
 * The coordinator lane's ledger (docs/RETRIEVE.md "Ledger", docs/RECEIPTS.md): `loretrace retrieve` records
 * its own lookups in the same hash-chained v3 form the research proxy writes, so both lanes have one kind of
 * receipt, and every runner_captured entry of its capture fragment is bound to the record that read it
 * (`trace_id` = `<ledger_id>:<seq>:<record_hash prefix>`, src/receipts/ledger-export.ts).
 *
 * Records, in this order: `SESSION_OPENED` (runner `retrieve`, mode `coordinator_scoped_retrieval`, the id
 * and sha256 of the packet the run wrote — the packet the responder is handed, which `capture --ledger`
 * checks, as it checks a proxy session's —, snapshot, policy receipt, required seeds, and in `admitted`
 * every note the walk consulted (`via: seed` or `scope`) or reached by a link (`via: follow`), in the
 * fragment's order); per query the traversal ran a `search` call (arguments `{ query }`); per trace entry a
 * `read` call — the chunk lines the walk excerpted, recorded as ref, range, file sha256 and the sha256 of
 * the text (never the text), with the entry's `query` and `used_for` in its arguments so `ledger export`
 * and `capture --ledger` give back the fragment's entries exactly; each call is a `TOOL_CALL` record (the
 * request) followed by its `TOOL_RESULT` (naming the call by `call_record_id`; the record a trace_id names);
 * `SESSION_CLOSED` with totals. The draft packet's sha256 is in the run's lock (an input). The records are written from the walk's result once it is complete
 * (the walk itself is a pure function and reads nothing it does not excerpt or rank), so their order is
 * searches then reads, not the interleaving of the walk; `depth` of a served range is null (the walk's
 * hop counts are in `loretrace traverse`'s decisions, not in its result).
 */
import { LoretraceError } from '../errors.js';
import type { VaultIndex, VaultPath } from '../types.js';
import type { ResearchTraceEntry } from '../contracts/types.js';
import { parseRef } from '../refs/ref.js';
import { LedgerChain, viewLedger } from './ledger-record.js';
import { sha256Hex } from '../vault/hash.js';
import { traceNotePath } from '../excerpts/trace.js';
import type { AdmissionVia, LedgerActor, LedgerOkOutcome, LedgerRecord, LedgerSessionInfo, ServedRange } from './ledger-record.js';
import type { CaptureFragment } from '../packet/build.js';
import { formatTraceId, ledgerPin } from './ledger-export.js';
import type { LedgerBindingSet, TraceBinding } from './ledger-export.js';
import type { LedgerSigner } from './signing.js';

/** `actor` of every record retrieve writes: the coordinator runner itself. */
const RETRIEVE_ACTOR: LedgerActor = { kind: 'system', id: 'loretrace-retrieve' };

/** loretrace version recorded in the ledger. */
const LORETRACE_VERSION = '0.1.0';

/** What {@link recordRetrieval} reads of a coordinator-lane build (`buildPacket`'s capture fragment and queries). */
export interface RetrievalRun {
  capture: CaptureFragment;
  /** Queries the traversal ran, in order. */
  queries: readonly string[];
}

/** Options of {@link recordRetrieval}. */
export interface RecordRetrievalOptions {
  /** `packet_id` of the packet the run wrote (the one handed to the responder; `capture --ledger` checks it). */
  packetId: string;
  /** SHA-256 (hex) of the bytes of the packet file the run wrote, or null when it is not written to a file. */
  packetSha256: string | null;
  /** The packet file the run wrote (informational; the CLI gives it relative to the ledger's folder). */
  packetFile?: string | null;
  /** Clock for `occurred_on` (default: the wall clock). One call per record. */
  now?: () => Date;
  /**
   * Runner key that signs the `SESSION_CLOSED` record (`retrieve --signing-key`, src/receipts/signing.ts);
   * none: unsigned. Ed25519 is deterministic, so a signed re-run is byte-identical too.
   */
  signer?: LedgerSigner | null;
}

/** Result of {@link recordRetrieval}. */
export interface RecordedRetrieval<C> {
  /** The capture fragment with every trace_id bound to its read record, and `ledger_head` pinned. */
  capture: C & { ledger_head: string };
  /** The ledger text to write (JSONL, LF-terminated). */
  ledgerText: string;
  /** The ledger's pin and one binding per trace entry (what a lock file records). */
  binding: LedgerBindingSet;
}

/** The vault path of a policy receipt `seed` row's clause, or null when it does not name a note of this vault. */
function seedPath(clause: string, namespace: string): VaultPath | null {
  try {
    const r = parseRef(clause, { namespace, label: 'seed' });
    return r.is_prefix ? null : r.path;
  } catch {
    return null;
  }
}

/**
 * The notes the walk admitted, as the session's `admitted` list: consulted refs (`via: seed` for a policy
 * seed, else `scope`), then followed refs (`via: follow`), in the fragment's order.
 */
function admittedNotes(capture: CaptureFragment, seeds: ReadonlySet<string>, namespace: string): { ref: string; path: string; via: AdmissionVia }[] {
  const note = (ref: string, via: (path: string) => AdmissionVia) => {
    const path = seedPath(ref, namespace) ?? ref;
    return { ref, path, via: via(path) };
  };
  return [
    ...capture.consulted_refs.map((r) => note(r, (p) => (seeds.has(p) ? 'seed' : 'scope'))),
    ...capture.followed_refs.map((r) => note(r, () => 'follow')),
  ];
}

/**
 * Record a coordinator-lane run in a new v3 ledger and bind its capture fragment's trace entries to it.
 * Pure apart from the clock: the same run and clock give the same ledger, ids and trace_ids (the CLI takes
 * the clock from `SOURCE_DATE_EPOCH` when set, for byte-identical re-runs).
 *
 * @throws LoretraceError `bad_trace_entry` when a trace entry names a file the index does not hold (the
 *   fragment was not built from this index).
 */
export function recordRetrieval<C extends RetrievalRun['capture']>(index: VaultIndex, run: { capture: C; queries: readonly string[] }, options: RecordRetrievalOptions): RecordedRetrieval<C> {
  const now = options.now ?? (() => new Date());
  const at = () => now().toISOString();
  const files = new Map(index.manifest.map((f) => [f.path, f.sha256]));
  const seeds = run.capture.policy_receipt
    .filter((r) => r.kind === 'seed')
    .map((r) => ({ ref: r.clause, path: seedPath(r.clause, index.namespace) }))
    .filter((s): s is { ref: string; path: VaultPath } => s.path !== null);
  const session: LedgerSessionInfo = {
    loretrace_version: LORETRACE_VERSION,
    runner: 'retrieve',
    packet_id: options.packetId,
    packet_sha256: options.packetSha256,
    packet_file: options.packetFile ?? null,
    namespace: index.namespace,
    snapshot_id: index.snapshot_id,
    mode: 'coordinator_scoped_retrieval',
    policy_receipt: [...run.capture.policy_receipt],
    budgets: {},
    limits: {},
    required_seeds: seeds.map((s) => ({ ref: `${index.namespace}:${s.path}`, path: s.path })),
    admitted: admittedNotes(run.capture, new Set(seeds.map((s) => s.path)), index.namespace),
    not_admitted: [],
  };
  const chain = new LedgerChain({ signer: options.signer ?? null });
  chain.append({ kind: 'SESSION_OPENED', occurred_on: at(), actor: RETRIEVE_ACTOR, session });
  /** A `TOOL_CALL` record (the request), then its `TOOL_RESULT`; returns the result record. */
  const call = (tool: 'search' | 'read', args: Record<string, unknown>, payload: unknown, outcome: LedgerOkOutcome): LedgerRecord => {
    const request = chain.append({ kind: 'TOOL_CALL', occurred_on: at(), actor: RETRIEVE_ACTOR, tool, transport: 'retrieve', arguments: args });
    return chain.append({ kind: 'TOOL_RESULT', occurred_on: at(), actor: RETRIEVE_ACTOR, call_record_id: request.record_id, tool, transport: 'retrieve', payload, outcome });
  };
  for (const query of run.queries) {
    call('search', { query }, { query }, { status: 'ok', snapshot_id: index.snapshot_id, query, chars_returned: 0 });
  }
  const bound: ResearchTraceEntry[] = [];
  const reads: { seq: number; hash: string; range: ServedRange; entry: ResearchTraceEntry }[] = [];
  run.capture.research_trace.forEach((entry, i) => {
    const fileSha = files.get(traceNotePath(entry.source_path));
    if (fileSha === undefined) {
      throw new LoretraceError('bad_trace_entry', `research_trace entry ${i} (${entry.trace_id}) cites ${entry.source_path}, which is not in vault ${index.namespace} (snapshot ${index.snapshot_id})`, { pointer: `/research_trace/${i}/source_path`, expected: 'a file of the index the run read' });
    }
    const range = {
      ref: entry.source_ref, path: traceNotePath(entry.source_path) as VaultPath, chunk_index: entry.chunk_index, line_start: entry.line_start, line_end: entry.line_end,
      file_sha256: fileSha, text_sha256: sha256Hex(entry.extracted_constraint), via: 'traversal' as const, depth: null,
    };
    const record = call(
      'read',
      { ref: entry.source_ref, line_start: entry.line_start, line_end: entry.line_end, query: entry.query, used_for: entry.used_for },
      { ref: entry.source_ref, line_start: entry.line_start, line_end: entry.line_end, text: entry.extracted_constraint },
      { status: 'ok', snapshot_id: index.snapshot_id, served: [range], chars_returned: entry.extracted_constraint.length },
    );
    reads.push({ seq: record.seq, hash: record.record_hash, range, entry });
    bound.push({ ...entry, trace_id: formatTraceId(record.ledger_id, record.seq, 0, record.record_hash) });
  });
  chain.append({
    kind: 'SESSION_CLOSED', occurred_on: at(), actor: RETRIEVE_ACTOR,
    totals: { tool_calls: run.queries.length + reads.length, ok: run.queries.length + reads.length, refused: 0, searches: run.queries.length, reads: reads.length },
  });
  const view = viewLedger(chain.records as unknown as Record<string, unknown>[]);
  const bindings: TraceBinding[] = reads.map((r, i) => ({
    trace_id: bound[i]!.trace_id, ledger_id: view.ledger_id, seq: r.seq, piece: 0, record_id: `${view.ledger_id}:${r.seq}`,
    record_hash: r.hash, ledger_head: view.head, snapshot_id: index.snapshot_id,
    source_ref: r.range.ref, line_start: r.range.line_start, line_end: r.range.line_end, text_sha256: r.range.text_sha256,
  }));
  return {
    capture: { ...run.capture, research_trace: bound, ledger_head: view.head },
    ledgerText: chain.text(),
    binding: { ledger: ledgerPin(view), bindings },
  };
}
