/**
 * The ledger half of trace verification (docs/VALIDATE.md "Trace verification", docs/RECEIPTS.md): is a
 * `runner_captured` entry backed by the record that served it, in a ledger whose chain verifies up to its
 * pinned head? Seed 001: "`runner_captured`: the runner or retrieval worker captured the lookup as it
 * happened"; "Trust, but make the trust write receipts". Seed 004 gives the receipt's form.
 *
 * Three steps, each a function here, called by `verifyTrace`:
 * 1. {@link loadTraceLedgers} — verify every given ledger against its pin (a `--head`, the input's own
 *    `ledger_head`, or a lock's `ledger.head`) and its signer (trusted keys, src/receipts/signing.ts), and
 *    classify it `intact`, `ledger_broken`, `ledger_not_closed` or an authorship code;
 * 2. {@link checkBacking} — per runner_captured entry: its trace_id names a record of a given ledger, the
 *    ledger is not broken and (with trusted keys) signed by one of them, and the record served exactly the
 *    entry's ref, range and text hash;
 * 3. {@link checkSeeds} — responder lane: every required seed of the ledger's session was read.
 */
import type { LedgerView, ViewedCall, ViewedRange } from './ledger-record.js';
import { viewLedger } from './ledger-record.js';
import { parseLedger, verifyLedger } from './ledger.js';
import { findServedPiece, parseTraceId, servedMismatch } from './ledger-export.js';
import type { ResearchTraceEntry } from '../contracts/types.js';
import { AUTHORSHIP_CODES } from './signing.js';
import type { AuthorshipCode, LedgerAuthorship, TrustedKey } from './signing.js';

/** A ledger handed to `verifyTrace`: its text and the file it came from. */
export interface TraceLedgerInput {
  file: string | null;
  text: string;
}

/**
 * A pinned head: the record_hash the ledger's last record must have. `ledger_id` names the ledger it pins;
 * without it, the pin applies to the only ledger given, or else to the ledger the input's entries name.
 * `source` says where the pin came from (`--head`, `/ledger_head` of the input, a lock file).
 */
export interface LedgerHeadPin {
  head: string;
  ledger_id?: string;
  source: string;
}

/**
 * A ledger's verdict: `intact` — the chain verifies, up to the pinned head when there is one;
 * `ledger_broken` — an edited, reordered or torn record, or a head that is not the pinned one (records cut
 * off at the end); `ledger_not_closed` — intact but without its closing record and with no pin to say it
 * is complete (a warning: the capture it backs stays a draft, seed 001: "label the sample as draft");
 * the authorship codes of src/receipts/signing.ts — the chain verifies but who wrote it does not:
 * `ledger_signature_invalid` (a signature that does not verify, checked always), `ledger_unsigned` and
 * `ledger_untrusted_signer` (only with trusted keys). A ledger of any of these backs nothing.
 */
export type LedgerDisposition = 'intact' | 'ledger_broken' | 'ledger_not_closed' | AuthorshipCode;

/** The verdict on one given ledger. */
export interface TraceLedgerVerdict {
  file: string | null;
  /** The ledger's id (null when not even its first record verifies). */
  ledger_id: string | null;
  schema_version: string | null;
  /** Records that verified. */
  records: number;
  /** record_hash of the last record that verified. */
  head: string | null;
  /** The pinned head it was checked against, and where the pin came from; null when unpinned. */
  pinned_head: string | null;
  pin_source: string | null;
  closed: boolean;
  disposition: LedgerDisposition;
  /** Why it is not plainly intact (first error, or the missing closing record); null for intact. */
  detail: string | null;
  /** Who signed it and whether that was checked (`verifyLedger`'s `authorship`). */
  authorship: LedgerAuthorship;
}

/** A given ledger, verified: its verdict and, when its records verify, its view. */
export interface LoadedTraceLedger {
  verdict: TraceLedgerVerdict;
  view: LedgerView | null;
}

/** The pin that applies to a ledger whose id is `id` (see {@link LedgerHeadPin}). */
function pinFor(pins: readonly LedgerHeadPin[], id: string | null, only: boolean, named: string | null): LedgerHeadPin | null {
  return pins.find((p) => p.ledger_id !== undefined && p.ledger_id === id)
    ?? pins.find((p) => p.ledger_id === undefined && (only || (named !== null && named === id)))
    ?? null;
}

/**
 * Verify every given ledger (chain, schema, ids; `verifyLedger`) against the pin that applies to it, and
 * its authorship against `trustedKeys` (none: not checked, src/receipts/signing.ts).
 * `namedLedger` is the ledger_id the input's first ledger-bound entry names (for pins without an id).
 * Never throws for bad ledger content: a ledger that does not verify is `ledger_broken` with its first error;
 * one whose chain verifies but whose authorship fails gets that code as its disposition.
 */
export async function loadTraceLedgers(inputs: readonly TraceLedgerInput[], pins: readonly LedgerHeadPin[], namedLedger: string | null, trustedKeys: readonly TrustedKey[] = []): Promise<LoadedTraceLedger[]> {
  const out: LoadedTraceLedger[] = [];
  for (const input of inputs) {
    const plain = await verifyLedger(input.text, { ...(input.file ? { file: input.file } : {}), trustedKeys });
    const pin = pinFor(pins, plain.ledger_id, inputs.length === 1, namedLedger);
    const report = pin ? await verifyLedger(input.text, { ...(input.file ? { file: input.file } : {}), head: pin.head, trustedKeys }) : plain;
    const firstError = report.findings.find((f) => f.severity === 'error');
    let disposition: LedgerDisposition = 'intact';
    let detail: string | null = null;
    if (firstError && (AUTHORSHIP_CODES as readonly string[]).includes(firstError.code)) {
      disposition = firstError.code as AuthorshipCode;
      detail = `[${firstError.code}] ${firstError.message}`;
    } else if (firstError) {
      disposition = 'ledger_broken';
      detail = `[${firstError.code}] ${firstError.message}${firstError.code === 'ledger_head_mismatch' && pin ? ` (head pinned by ${pin.source})` : ''}`;
    } else if (!report.closed && !pin) {
      disposition = 'ledger_not_closed';
      detail = report.findings.find((f) => f.code === 'ledger_not_closed')?.message ?? 'the ledger has no closing record';
    }
    // Records that verify are still read (an intact prefix of a broken ledger names its records), but a
    // broken ledger backs nothing: checkBacking reports its entries as ledger_broken.
    const records = report.records > 0 ? parseLedger(input.text, input.file ?? undefined, report.records) : [];
    out.push({
      verdict: {
        file: input.file, ledger_id: report.ledger_id, schema_version: report.schema_version, records: report.records, head: report.head_hash,
        pinned_head: pin?.head ?? null, pin_source: pin?.source ?? null, closed: report.closed, disposition, detail, authorship: report.authorship,
      },
      view: records.length > 0 ? viewLedger(records) : null,
    });
  }
  return out;
}

/** Why a runner_captured entry is not ledger-backed, or null when it is (with the backing record's id). */
export type BackingResult =
  | { backed: true; record_id: string; ledger: LoadedTraceLedger; call: ViewedCall; range: ViewedRange; piece: number }
  | { backed: false; disposition: 'unbacked' | 'ledger_mismatch' | 'ledger_broken' | 'ledger_untrusted'; detail: string; record_id: string | null };

/**
 * Is a runner_captured entry backed by a given ledger? `unbacked`: the trace_id is not of the
 * ledger-bound form (a hand-written entry), or no given ledger has its ledger_id, or that ledger has no
 * record of that seq serving text; `ledger_broken`: the ledger that holds it does not verify (up to its
 * pinned head); `ledger_untrusted`: it verifies, but its authorship failed (unsigned or signed by an
 * untrusted key while trusted keys were given, or a signature that does not verify); `ledger_mismatch`:
 * the record exists but its hash is another, or it served another ref, range or text than the entry claims.
 */
export function checkBacking(entry: ResearchTraceEntry, ledgers: readonly LoadedTraceLedger[]): BackingResult {
  const parts = parseTraceId(entry.trace_id);
  if (parts === null) {
    return { backed: false, disposition: 'unbacked', record_id: null, detail: `trace_id ${JSON.stringify(entry.trace_id)} is not bound to a ledger record (expected <ledger_id>:<seq>:<record_hash prefix>): a hand-written entry can be checked for text but never passes as runner_captured` };
  }
  const recordId = `${parts.ledger_id}:${parts.seq}`;
  const ledger = ledgers.find((l) => l.verdict.ledger_id === parts.ledger_id);
  if (!ledger || !ledger.view) {
    const given = ledgers.map((l) => l.verdict.ledger_id ?? l.verdict.file ?? '?');
    return { backed: false, disposition: 'unbacked', record_id: recordId, detail: `ledger ${parts.ledger_id} is not among the ledgers given (${given.length === 0 ? 'none: pass --ledger' : given.join(', ')}); nothing backs record ${recordId}` };
  }
  const where = ledger.verdict.file ?? parts.ledger_id;
  const found = findServedPiece(ledger.view, parts);
  if (ledger.verdict.disposition === 'ledger_broken') {
    return { backed: false, disposition: 'ledger_broken', record_id: recordId, detail: `ledger ${where} does not verify: ${ledger.verdict.detail}` };
  }
  if ((AUTHORSHIP_CODES as readonly string[]).includes(ledger.verdict.disposition)) {
    return { backed: false, disposition: 'ledger_untrusted', record_id: recordId, detail: `ledger ${where} is not signed by a trusted runner key: ${ledger.verdict.detail}` };
  }
  if (!found.ok) {
    if (found.why === 'no_record' || found.why === 'no_piece') return { backed: false, disposition: 'unbacked', record_id: recordId, detail: `${found.detail}; nothing backs this entry` };
    return { backed: false, disposition: 'ledger_mismatch', record_id: recordId, detail: found.detail };
  }
  const mismatch = servedMismatch(entry, found.range);
  if (mismatch !== null) return { backed: false, disposition: 'ledger_mismatch', record_id: recordId, detail: `record ${recordId} of ${where} served ${found.range.ref} lines ${found.range.line_start}-${found.range.line_end}, but ${mismatch}` };
  return { backed: true, record_id: recordId, ledger, call: found.call, range: found.range, piece: parts.piece };
}

/** One required seed of a responder-lane ledger and whether its session read it. */
export interface SeedVerdict {
  ref: string;
  ledger_id: string;
  disposition: 'consulted' | 'seed_not_consulted';
}

/**
 * Responder lane: every `required_seeds` entry of each intact or unclosed responder-lane ledger
 * (`mode: responder_scoped_repository_search`) must have been served by some record of that ledger.
 * Seed 001: "the responder must consult the seed docs before answering … No consulted refs means the
 * research-enabled response failed at the first hurdle."
 */
export function checkSeeds(ledgers: readonly LoadedTraceLedger[]): SeedVerdict[] {
  const out: SeedVerdict[] = [];
  for (const l of ledgers) {
    const v = l.view;
    if (!v || v.mode !== 'responder_scoped_repository_search' || l.verdict.disposition === 'ledger_broken') continue;
    const read = new Set<string>();
    for (const c of v.calls) if (c.outcome.status === 'ok') for (const r of c.outcome.served) read.add(r.path);
    for (const s of v.required_seeds) out.push({ ref: s.ref, ledger_id: v.ledger_id, disposition: read.has(s.path) ? 'consulted' : 'seed_not_consulted' });
  }
  return out;
}
