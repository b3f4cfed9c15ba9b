/**
 * `ProxySession`: one sandboxed research session of a responder over one packet (docs/PROXY.md). Transports
 * (src/server/mcp.ts, src/server/http.ts) are thin shells that hand every request to {@link ProxySession.call}.
 *
 * Enforcement (docs/PROXY.md "Enforcement"):
 * - A ref is parsed by the one ref grammar (`parseRef`, src/refs) and resolved only through the index built
 *   at session start (`resolveRef`); the request text never becomes a file-system path.
 * - *Admitted* = allowed by the policy's one enforcement path (`checkPath` / `checkEdge`, src/policy — the same
 *   functions the traversal uses) AND (a seed or allowed_scope note, depth 0, OR reached through `lore_follow`
 *   within `max_link_depth`). Nothing else is readable, searchable or followable from.
 * - Bytes are read by `readIndexedLines` (src/proxy/safe-read.ts), which re-checks that the file is still the
 *   indexed one (regular file, no symlink, one hard link, inside the root, same sha256).
 * - Budgets (src/proxy/limits.ts) and a request-rate limiter bound every session.
 * - Every call, admitted or refused, appends two ledger records — its `TOOL_CALL` (the request, before the
 *   tool runs) and its outcome (`TOOL_RESULT` / `TOOL_REFUSED`, naming the call) — fsync'ed together, once,
 *   before the result is returned. Calls are serialised (one at a time, in arrival order), so the ledger
 *   chain is linear and a call's outcome is the record after it.
 *
 * Refusals are results, not exceptions: `{ ok: false, refusal: { code, message } }`. A hidden ref and a
 * missing ref both give `not_found` with the same message; the ledger keeps the true reason.
 */
import { createHash } from 'node:crypto';
import { basename, resolve as resolvePath } from 'node:path';
import type { z } from 'zod';
import { LoretraceError, isLoretraceError } from '../errors.js';
import type { Chunk, LinkRecord, NoteRecord, VaultIndex, VaultPath } from '../types.js';
import { formatRef, parseRef, resolveRef } from '../refs/index.js';
import { notesNamed, splitNameAndFragment } from '../refs/names.js';
import type { ParsedRef } from '../refs/index.js';
import { checkEdge, checkPath, compilePolicy, edgeTarget } from '../policy/index.js';
import { checkPathPrefixes } from '../policy/compile.js';
import { sectionsOf, visibleLinks, withheldChunks } from '../policy/sections.js';
import type { CompiledPolicy, PolicyReceiptRow } from '../policy/types.js';
import { search, searchCorpus } from '../search/search.js';
import type { SearchCorpus } from '../search/search.js';
import { indexVault } from '../indexer/build.js';
import type { IndexOptions } from '../indexer/build.js';
import { validatePacket } from '../contracts/validate.js';
import { decodeJsonDocument, readInputBytes } from '../contracts/json-input.js';
import type { ResponderPacket } from '../contracts/types.js';
import { sliceLines } from '../notes/lines.js';
import { LedgerWriter } from '../receipts/ledger.js';
import type { LedgerSigner } from '../receipts/signing.js';
import type { AdmissionVia, LedgerActor, LedgerOutcome, LedgerRecord, LedgerSessionInfo, ServedRange } from '../receipts/ledger-record.js';
import { MAX_ARGUMENT_DEPTH, RateLimiter, mergeBudgets, nestsDeeperThan, resolveLimits } from './limits.js';
import type { ServerLimits, SessionBudgets } from './limits.js';
import { REFUSAL_CODES, escapeInvisible, refusalCodeFor, shownInput } from './refusals.js';
import type { Refusal, RefusalCode } from './refusals.js';
import { readIndexedLines } from './safe-read.js';
import { lineView, whollyWithheld, withholdSections } from './withhold.js';
import type { LineView } from './withhold.js';
import { LORE_DATA_NOTICE, isToolName, toolInputSchemas } from './tools.js';
import type { ToolName, ToolResult } from './tools.js';

/** loretrace version recorded in the ledger. */
const LORETRACE_VERSION = '0.1.0';

/** `actor` of the records the runner itself writes (session open and close). */
const PROXY_ACTOR: LedgerActor = { kind: 'system', id: 'loretrace-proxy' };

/** Where a call came from (recorded in the ledger). */
export type ProxyTransport = 'mcp' | 'http' | 'direct';

/**
 * Answer of {@link ProxySession.call}: a tool result, or a refusal. `seq` is the call's outcome record in the
 * ledger (`TOOL_RESULT` / `TOOL_REFUSED`; its `TOOL_CALL` is `seq - 1`): the record a trace_id names.
 */
export type ProxyResponse =
  | { ok: true; tool: ToolName; seq: number; result: ToolResult<ToolName> }
  | { ok: false; tool: string; seq: number; refusal: Refusal };

/**
 * How a transport sends a call's outcome when that is not the tool result or `{ error: refusal }` itself (MCP
 * `resources/read` sends `{ contents }`, `resources/list` a resource list, a refusal of either a JSON-RPC
 * error): given the response (its `seq` is the outcome record's), the exact answer the client will get, as
 * JSON — the result, or `{ error }` with the error object sent. Its RFC 8785 hash is the record's `payload_hash`.
 */
export type ProxyAnswer = (response: ProxyResponse) => unknown;

/** Clocks of a session (injectable for tests). */
export interface ProxyClock {
  /** Wall-clock time written to ledger records. */
  now(): Date;
  /** Monotonic milliseconds for the rate limiter and the time budget. */
  monotonic(): number;
}

const SYSTEM_CLOCK: ProxyClock = { now: () => new Date(), monotonic: () => performance.now() };

/** Everything a session is made of (see {@link openProxySession} for the usual way to get them). */
export interface ProxySessionOptions {
  index: VaultIndex;
  packet: ResponderPacket;
  /** SHA-256 (hex) of the packet file's bytes. */
  packetSha256: string;
  /** Packet file name for the ledger (informational). */
  packetFile?: string | null;
  compiled: CompiledPolicy;
  ledger: LedgerWriter;
  /** Server limits; keys left out take their `DEFAULT_LIMITS` value (`resolveLimits`, src/proxy/limits.ts). */
  limits?: Partial<ServerLimits>;
  clock?: ProxyClock;
}

/** An admitted note. */
interface Admission {
  path: VaultPath;
  depth: number;
  via: AdmissionVia;
  from: VaultPath | null;
}

/** A refusal inside tool code: thrown, caught by `call`, turned into a ledgered refusal. */
class Refuse extends Error {
  constructor(readonly code: RefusalCode, readonly reason: string, message: string, readonly clientMessage?: string) {
    super(message);
  }
}

/** Client message of a `not_found` refusal: the same for hidden and missing refs (the value escaped and cut short). */
function notFoundMessage(shown: string): string {
  return `no admitted note matches ${shownInput(shown)} in this session's index`;
}

/**
 * Client message of every `not_found` answer of `lore_follow`: no link of `fromRef` leads to the target, the
 * link's target is missing (unresolved), or it is lore the packet may not see (hidden, future-era, outside the
 * prefixes). One sentence for all of them, built from the request alone — `fromRef` is an admitted note and
 * `shown` is the client's own input, escaped — so the answer cannot tell a right guess of a hidden path from a
 * wrong one; the ledger keeps the true reason.
 */
function noSuchLinkMessage(fromRef: string, shown: string): string {
  return `no link in ${fromRef} leads to ${shownInput(shown)}; lore_follow only follows links that exist in the note`;
}

/**
 * Client message of an `out_of_scope` refusal: the same whether the note exists or not ("not yours" has
 * one answer) — the class and the packet's allowed prefixes, the value escaped and cut short.
 */
function outOfScopeMessage(label: string, shown: string, allowed: readonly string[]): string {
  return `${label} ${shownInput(shown)} is not in this packet's scope (out_of_scope); allowed prefixes: ${allowed.join(', ')}`;
}

/**
 * What is wrong with one tool argument, in words a responder can act on (`must be a non-empty string`,
 * `must be an integer`, `is required (a string)`), never the validator's own wording; the tools' schemas
 * (src/proxy/tools.ts) use only strings, integers and objects.
 */
function plainIssue(issue: z.core.$ZodIssue | undefined): string {
  if (issue === undefined) return 'is invalid';
  const i = issue as { code: string; expected?: unknown; origin?: unknown; minimum?: unknown };
  const kind = (t: unknown): string => (t === 'string' ? 'a string' : t === 'number' || t === 'int' ? 'an integer' : t === 'object' ? 'an object' : `of type ${String(t)}`);
  if (i.code === 'too_small') return i.origin === 'string' ? (Number(i.minimum) <= 1 ? 'must be a non-empty string' : `must have at least ${String(i.minimum)} characters`) : `must be at least ${String(i.minimum)}`;
  // zod reports no input value (reportInput is off), only its type, at the end of its message.
  if (i.code === 'invalid_type') return /received undefined$/.test(issue.message) ? `is required (${kind(i.expected)})` : `must be ${kind(i.expected)}`;
  if (i.code === 'invalid_format' || i.code === 'not_multiple_of') return 'must be an integer';
  return 'is invalid';
}

/** Client message of a `bad_ref` refusal: the value escaped and cut short, what a ref looks like (never the parser's echo). */
function badRefMessage(label: string, input: string, namespace: string): string {
  return `${label} ${shownInput(input)} is not a lore ref (bad_ref); expected ${namespace}:folder/Note.md, optionally with #Heading, #chunkN, #La-Lb or #^block`;
}

/** The note a link leads to (the policy's own `edgeTarget`), or null. */
function resolvedPath(link: LinkRecord): VaultPath | null {
  return edgeTarget(link);
}

/** Links that can name lore notes (not tags, not external URLs). */
function isLoreLink(link: LinkRecord): boolean {
  return link.syntax !== 'tag' && link.syntax !== 'external';
}

/** An unpaired UTF-16 surrogate: not Unicode text (a JSON `\uD800` escape can carry one; UTF-8 cannot). */
const LONE_SURROGATE_RE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The first string (value or key) of tool arguments holding an unpaired surrogate: its dotted path, the
 * surrogate's escape and its 0-based character index; null when every string is well-formed. Call it on
 * arguments already bounded in depth (`nestsDeeperThan`).
 */
function loneSurrogateIn(value: unknown, path = ''): { field: string; unit: string; at: number } | null {
  const hit = (s: string, field: string) => {
    const m = LONE_SURROGATE_RE.exec(s);
    return m ? { field: field || '(arguments)', unit: `\\u${m[0].charCodeAt(0).toString(16)}`, at: m.index } : null;
  };
  if (typeof value === 'string') return hit(value, path);
  if (value === null || typeof value !== 'object') return null;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const field = path === '' ? k : `${path}.${k}`;
    const found = hit(k, field) ?? loneSurrogateIn(v, field);
    if (found) return found;
  }
  return null;
}

/**
 * Replace long strings by a digest (what the ledger records as `arguments`): strings over `maxChars` become
 * `{ $omitted: 'string', chars, sha256 }`, arrays and objects keep 64 items/keys, and anything nested 6
 * levels down becomes `{ $omitted: 'nested', kind }` (recursion is bounded by that depth, whatever the input).
 */
export function digestArguments(value: unknown, maxChars: number, depth = 0): unknown {
  if (typeof value === 'string') {
    // A string with an unpaired surrogate has no UTF-8 (nor RFC 8785) form: recorded as its exact code units
    // — JSON string text with \uXXXX escapes (bounded like any string) and a sha256 over UTF-16LE — never
    // as the U+FFFD a canonical writer would put in its place (two different requests, one receipt).
    if (LONE_SURROGATE_RE.test(value)) {
      const json = JSON.stringify(value);
      return { $ill_formed: 'string', chars: value.length, ...(json.length <= maxChars + 2 ? { json } : {}), utf16le_sha256: createHash('sha256').update(Buffer.from(value, 'utf16le')).digest('hex') };
    }
    if (value.length <= maxChars) return value;
    return { $omitted: 'string', chars: value.length, sha256: createHash('sha256').update(value, 'utf8').digest('hex') };
  }
  if (value === null || typeof value === 'number' || typeof value === 'boolean') {
    return typeof value === 'number' && !Number.isFinite(value) ? String(value) : value;
  }
  // A bounded summary only: measuring a deeper value (JSON.stringify, canonical JSON) would recurse on
  // attacker-controlled depth.
  if (depth >= 6) return { $omitted: 'nested', kind: Array.isArray(value) ? 'array' : typeof value };
  if (Array.isArray(value)) {
    const kept = value.slice(0, 64).map((v) => digestArguments(v, maxChars, depth + 1));
    return value.length > 64 ? [...kept, { $omitted: 'items', count: value.length - 64 }] : kept;
  }
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    const keys = Object.keys(value as object);
    for (const k of keys.slice(0, 64)) {
      const v = (value as Record<string, unknown>)[k];
      // A key with an unpaired surrogate is written as its JSON text (escapes kept), marked so it reads as no plain key.
      const key = LONE_SURROGATE_RE.test(k) ? `$ill_formed_key:${JSON.stringify(k)}` : k;
      if (v !== undefined) out[key.length > 256 ? `${key.slice(0, 256)}…` : key] = digestArguments(v, maxChars, depth + 1);
    }
    if (keys.length > 64) out.$omitted_keys = keys.length - 64;
    return out;
  }
  return { $omitted: typeof value };
}

/**
 * One research session over one packet. Create it with {@link openProxySession} (or the constructor plus
 * {@link start} when you already hold the parts), call tools with {@link call}, end it with {@link close}.
 */
export class ProxySession {
  readonly index: VaultIndex;
  readonly packet: ResponderPacket;
  readonly compiled: CompiledPolicy;
  readonly limits: ServerLimits;
  readonly budgets: SessionBudgets;
  private readonly ledger: LedgerWriter;
  private readonly clock: ProxyClock;
  private readonly rate: RateLimiter;
  private readonly packetSha256: string;
  private readonly packetFile: string | null;
  /** `actor` of a tool record: the responder the packet names (who asked; the transport does not authenticate it). Built once. */
  private readonly agent: LedgerActor;
  private readonly inputs: ReturnType<typeof toolInputSchemas>;
  private readonly admitted = new Map<string, Admission>();
  private readonly consulted: string[] = [];
  private readonly followed: string[] = [];
  private readonly notesRead = new Set<string>();
  private readonly notes: Map<string, NoteRecord>;
  private readonly chunksByPath = new Map<string, Chunk[]>();
  private readonly linksByPath = new Map<string, LinkRecord[]>();
  private readonly views = new Map<string, LineView>();
  private corpus: { size: number; corpus: SearchCorpus } | null = null;
  private statusReceipt: PolicyReceiptRow[] | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  /** Calls (and recorded transport refusals) between arrival and their ledger flush: more than one → group commit. */
  private inFlight = 0;
  private startedAt = 0;
  private started = false;
  private closed = false;
  private used = { calls: 0, results: 0, chars: 0, reads: 0 };
  private totals: Record<string, number> = { tool_calls: 0, ok: 0, refused: 0 };

  constructor(options: ProxySessionOptions) {
    this.index = options.index;
    this.packet = options.packet;
    this.compiled = options.compiled;
    this.ledger = options.ledger;
    this.limits = resolveLimits(options.limits);
    this.clock = options.clock ?? SYSTEM_CLOCK;
    this.packetSha256 = options.packetSha256;
    this.packetFile = options.packetFile ?? null;
    this.agent = Object.freeze({ kind: 'agent', id: this.packet.responder_agent_id });
    this.budgets = mergeBudgets(this.limits, this.compiled.budgets);
    this.rate = new RateLimiter(this.limits.rate_burst, this.limits.rate_per_second, () => this.clock.monotonic());
    this.inputs = toolInputSchemas(this.limits);
    this.notes = new Map(this.index.notes.map((n) => [n.path, n]));
    for (const c of this.index.chunks) {
      const list = this.chunksByPath.get(c.path) ?? [];
      list.push(c);
      this.chunksByPath.set(c.path, list);
    }
    // Links standing in a hidden section are absent from the session: not listed, not followable.
    for (const l of visibleLinks(this.compiled, this.index.links)) {
      const list = this.linksByPath.get(l.source_path) ?? [];
      list.push(l);
      this.linksByPath.set(l.source_path, list);
    }
    for (const code of REFUSAL_CODES) this.totals[code] = 0;
  }

  /** Ref of a whole note. */
  private noteRef(path: string): string {
    return formatRef(this.index.namespace, path);
  }

  /**
   * Admit the seeds and scope notes (depth 0) through `checkPath` and write the `SESSION_OPENED` record
   * (packet id + sha256, snapshot_id, policy receipt, budgets, limits, admitted seeds), fsync'ed.
   * @throws LoretraceError `session_started` when called twice; ledger errors.
   */
  async start(): Promise<LedgerRecord> {
    if (this.started) throw new LoretraceError('session_started', 'the proxy session was already started');
    this.started = true;
    this.startedAt = this.clock.monotonic();
    const notAdmitted: { ref: string; reason: string }[] = [];
    const admit = (path: VaultPath, via: AdmissionVia) => {
      if (this.admitted.has(path)) return;
      const check = checkPath(this.compiled, path);
      if (!this.notes.has(path)) notAdmitted.push({ ref: this.noteRef(path), reason: 'not_found' });
      else if (!check.ok) notAdmitted.push({ ref: this.noteRef(path), reason: check.reason });
      else this.admitted.set(path, { path, depth: 0, via, from: null });
    };
    for (const p of this.compiled.seeds) admit(p, 'seed');
    for (const p of this.compiled.scope) admit(p, 'scope');
    const session: LedgerSessionInfo = {
      loretrace_version: LORETRACE_VERSION,
      runner: 'proxy',
      packet_id: this.packet.packet_id,
      packet_sha256: this.packetSha256,
      packet_file: this.packetFile,
      namespace: this.index.namespace,
      snapshot_id: this.index.snapshot_id,
      mode: 'responder_scoped_repository_search',
      policy_receipt: this.compiled.receipt,
      budgets: { ...this.budgets },
      limits: { ...this.limits } as unknown as Record<string, number>,
      required_seeds: this.compiled.seeds.map((p) => ({ ref: this.noteRef(p), path: p })),
      admitted: [...this.admitted.values()].map((a) => ({ ref: this.noteRef(a.path), path: a.path, via: a.via })),
      not_admitted: notAdmitted,
    };
    const record = this.ledger.append({ kind: 'SESSION_OPENED', occurred_on: this.clock.now().toISOString(), actor: PROXY_ACTOR, session });
    await this.ledger.flush();
    return record;
  }


  /** Number of admitted notes (seeds, scope and followed). */
  get admittedCount(): number {
    return this.admitted.size;
  }

  /**
   * Run one tool call. Never throws for a bad request: refusals come back as `{ ok: false, refusal }`.
   * Calls are serialised; the call's two ledger records (`TOOL_CALL`, then its outcome) are on disk — one
   * `fdatasync` for both, shared with concurrent calls — when the promise resolves.
   *
   * @param tool tool name as requested (an unknown name is refused with `bad_request` and recorded).
   * @param args the tool's arguments as received (validated here against the tool's input schema).
   * @param answer the answer the transport sends, when it reshapes the outcome ({@link ProxyAnswer}); by
   *   default the result, or `{ error: refusal }` — what `POST /tools/…` and MCP `tools/call` send.
   * @throws LoretraceError `session_closed` after {@link close}; `ledger_write_failed` when the ledger
   *   cannot be written (the session is then unusable).
   */
  async call(tool: string, args: unknown, transport: ProxyTransport = 'direct', answer?: ProxyAnswer): Promise<ProxyResponse> {
    if (!this.started) throw new LoretraceError('session_not_started', 'call start() before calling tools');
    if (this.closed) throw new LoretraceError('session_closed', 'the proxy session is closed');
    return this.serialized(() => this.handle(tool, args, transport, answer));
  }

  /**
   * Run `work` after every earlier call (the session's one queue), then make its ledger records durable
   * ({@link flushLedger}) before resolving with its result; `inFlight` counts it meanwhile, so concurrent
   * calls share one sync.
   */
  private async serialized<T>(work: () => T | Promise<T>): Promise<T> {
    this.inFlight += 1;
    try {
      const run = this.queue.then(work);
      this.queue = run.catch(() => undefined);
      const out = await run;
      await this.flushLedger();
      return out;
    } finally {
      this.inFlight -= 1;
    }
  }

  /**
   * Make this call's records durable: alone, with an inline sync; with other calls in flight, with one
   * sync shared by all of them (group commit, {@link LedgerWriter.flush}).
   */
  private flushLedger(): Promise<void> {
    return this.ledger.flush({ groupCommit: this.inFlight > 1 });
  }

  /**
   * Record a request that a transport refused before it could reach a tool (body too large, malformed
   * JSON, wrong method, bad Host header …), so the ledger still holds every request: its `TOOL_CALL` and
   * `TOOL_REFUSED`, fsync'ed once. `answer` is the exact answer the transport sends, whose hash is the
   * record's `payload_hash` (default `{ error: { code, message } }`, the body of a refused `POST /tools/…`; a
   * JSON-RPC transport passes `{ error }` with the JSON-RPC error object it sends). Returns the `TOOL_REFUSED`
   * record's seq (-1 when the session is not open).
   */
  async recordTransportRefusal(tool: string, argumentsSummary: unknown, code: RefusalCode, reason: string, message: string, transport: ProxyTransport, answer?: unknown): Promise<number> {
    if (this.closed || !this.started) return -1;
    return this.serialized(() => {
      this.totals.tool_calls! += 1;
      this.totals.refused! += 1;
      this.totals[code] = (this.totals[code] ?? 0) + 1;
      const call = this.recordCall(tool, argumentsSummary, transport);
      const rec = this.ledger.append({
        kind: 'TOOL_REFUSED', occurred_on: this.clock.now().toISOString(), actor: this.agent, call_record_id: call.record_id, tool, transport,
        payload: answer ?? { error: { code, message } },
        outcome: { status: 'refused', code, reason, message },
      });
      return rec.seq;
    });
  }

  /**
   * Close the session: write `SESSION_CLOSED` with totals (zeros included), fsync and close the ledger.
   * Pending calls finish first. Safe to call twice.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue;
    if (this.started) {
      try {
        this.ledger.append({
          kind: 'SESSION_CLOSED', occurred_on: this.clock.now().toISOString(), actor: PROXY_ACTOR,
          totals: {
            ...this.totals,
            chars_returned: this.used.chars, results_returned: this.used.results, reads: this.used.reads,
            notes_read: this.notesRead.size, admitted: this.admitted.size,
          },
        });
      } catch {
        // A failed ledger stays failed; close it anyway.
      }
    }
    await this.ledger.close();
  }

  // -------------------------------------------------------------------------------------------------------

  /**
   * Append the `TOOL_CALL` record of a request as it arrived — the tool name as asked, the transport, who
   * asked and the bounded arguments ({@link digestArguments}) — written (not yet fsync'ed: its outcome is
   * fsync'ed with it) before the tool runs.
   */
  private recordCall(tool: string, args: unknown, transport: ProxyTransport): LedgerRecord {
    return this.ledger.append({
      kind: 'TOOL_CALL', occurred_on: this.clock.now().toISOString(), actor: this.agent, tool, transport,
      arguments: digestArguments(args === undefined ? {} : args, this.limits.ledger_max_arg_chars),
    });
  }

  private async handle(tool: string, args: unknown, transport: ProxyTransport, answer?: ProxyAnswer): Promise<ProxyResponse> {
    const call = this.recordCall(tool, args, transport);
    let outcome: LedgerOutcome;
    let result: ToolResult<ToolName> | null = null;
    let refusal: Refusal | null = null;
    try {
      const r = await this.dispatch(tool, args);
      result = r.result;
      outcome = r.outcome;
    } catch (e) {
      const refuse = e instanceof Refuse ? e : this.unexpected(e);
      refusal = { code: refuse.code, message: refuse.clientMessage ?? refuse.message };
      outcome = { status: 'refused', code: refuse.code, reason: refuse.reason, message: refuse.message };
    }
    this.totals.tool_calls! += 1;
    if (outcome.status === 'ok') this.totals.ok! += 1;
    else {
      this.totals.refused! += 1;
      this.totals[outcome.code] = (this.totals[outcome.code] ?? 0) + 1;
    }
    // The outcome record directly follows its TOOL_CALL (calls are serialised and append is synchronous), so
    // its seq is known before it is written — and with it the answer, which may carry the seq (MCP `_meta`).
    const seq = call.seq + 1;
    const response: ProxyResponse = refusal ? { ok: false, tool, seq, refusal } : { ok: true, tool: tool as ToolName, seq, result: result! };
    this.ledger.append({
      kind: outcome.status === 'ok' ? 'TOOL_RESULT' : 'TOOL_REFUSED', occurred_on: this.clock.now().toISOString(), actor: this.agent,
      call_record_id: call.record_id, tool, transport,
      payload: answer ? answer(response) : refusal ? { error: refusal } : result,
      outcome,
    });
    return response;
  }

  /**
   * A non-refusal error inside a tool: a LoretraceError maps through {@link refusalCodeFor} (file checks →
   * `not_found`); anything else is a bug, still recorded (reason `internal_error`) and answered `bad_request`
   * with a generic message, so the ledger stays complete.
   */
  private unexpected(e: unknown): Refuse {
    if (isLoretraceError(e)) {
      if (e.code === 'ledger_write_failed' || e.code === 'ledger_closed') throw e;
      const code = refusalCodeFor(e.code);
      return new Refuse(code, e.code, e.message, code === 'not_found' ? 'no admitted note matches the request in this session\'s index' : undefined);
    }
    const message = e instanceof Error ? e.message : String(e);
    return new Refuse('bad_request', 'internal_error', `internal error: ${message}`, 'the request could not be served (internal error; it is recorded)');
  }

  private async dispatch(tool: string, args: unknown): Promise<{ result: ToolResult<ToolName>; outcome: LedgerOutcome }> {
    if (!this.rate.take()) {
      throw new Refuse('rate_limited', 'rate_limited', `more than ${this.limits.rate_burst} calls at once or ${this.limits.rate_per_second} per second; slow down`);
    }
    this.used.calls += 1;
    if (this.used.calls > this.budgets.max_calls) {
      throw new Refuse('budget_exhausted', 'max_calls', `the session's call budget (${this.budgets.max_calls} calls) is spent`);
    }
    if (this.budgets.time_budget_ms !== null && this.clock.monotonic() - this.startedAt > this.budgets.time_budget_ms) {
      throw new Refuse('budget_exhausted', 'time_budget_ms', `the session's time budget (${this.budgets.time_budget_ms} ms) is spent`);
    }
    if (!isToolName(tool)) {
      throw new Refuse('bad_request', 'unknown_tool', `unknown tool ${shownInput(tool, 64)}; expected one of lore_search, lore_read, lore_links, lore_follow, research_status`);
    }
    if (nestsDeeperThan(args, MAX_ARGUMENT_DEPTH)) {
      throw new Refuse('bad_request', 'arguments_too_deep', `${tool}: arguments are nested deeper than ${MAX_ARGUMENT_DEPTH} levels`);
    }
    // Refused, never repaired: a search for "\ud800" silently run as "\ufffd" would answer another request.
    const lone = loneSurrogateIn(args);
    if (lone) throw new Refuse('bad_request', 'invalid_string', `${tool}: argument ${shownInput(lone.field, 64)} holds an unpaired UTF-16 surrogate (${lone.unit} at character ${lone.at}), which is not Unicode text; expected well-formed Unicode text`);
    // Only absent arguments are `{}`: `null` is refused like any other non-object ("must be an object").
    const parsed = this.inputs[tool].safeParse(args === undefined ? {} : args);
    if (!parsed.success) throw this.badArguments(tool, parsed.error);
    switch (tool) {
      case 'lore_search':
        return this.loreSearch(parsed.data as z.infer<typeof this.inputs.lore_search>);
      case 'lore_read':
        return this.loreRead(parsed.data as z.infer<typeof this.inputs.lore_read>);
      case 'lore_links':
        return this.loreLinks(parsed.data as z.infer<typeof this.inputs.lore_links>);
      case 'lore_follow':
        return this.loreFollow(parsed.data as z.infer<typeof this.inputs.lore_follow>);
      case 'research_status':
        return this.researchStatus();
    }
  }

  private badArguments(tool: string, error: z.ZodError): Refuse {
    const issue = error.issues[0];
    const field = issue?.path.map(String).join('.') || '(arguments)';
    let reason = 'invalid_arguments';
    if (issue?.code === 'too_big' && field === 'query') reason = 'query_too_long';
    else if (issue?.code === 'too_big' && (field === 'ref' || field === 'from_ref' || field === 'target')) reason = 'ref_too_long';
    else if (issue?.code === 'unrecognized_keys') reason = 'unknown_argument';
    const big = issue?.code === 'too_big' ? (issue as { maximum?: unknown; origin?: unknown }) : null;
    // Never the validator's text for unknown keys: it would echo the key names as sent.
    const keys = issue?.code === 'unrecognized_keys' ? ((issue as { keys?: unknown }).keys as string[] | undefined) ?? [] : null;
    const detail = big !== null
      // zod names a number's bound by its kind: `number` for a schema maximum, `int` for the safe-integer range
      // every integer argument has (line_end: 1e300), `bigint`; only a string is "longer".
      ? (big.origin === 'number' || big.origin === 'int' || big.origin === 'bigint' ? `is larger than the maximum of ${String(big.maximum)}` : `is longer than the limit of ${String(big.maximum)}`)
      : keys !== null ? `has unknown argument(s) ${keys.slice(0, 4).map((k) => shownInput(k, 32)).join(', ')}${keys.length > 4 ? ` and ${keys.length - 4} more` : ''}`
        : plainIssue(issue);
    return new Refuse('bad_request', reason, `${tool}: argument ${field} ${detail}`);
  }

  private budgetsLeft() {
    const b = this.budgets;
    return {
      calls: Math.max(0, b.max_calls - this.used.calls),
      results: Math.max(0, b.max_results - this.used.results),
      chars: Math.max(0, b.max_chars_returned - this.used.chars),
      notes: b.max_notes === null ? null : Math.max(0, b.max_notes - this.notesRead.size),
      reads: b.max_reads === null ? null : Math.max(0, b.max_reads - this.used.reads),
    };
  }

  /**
   * Parse a ref and find its admitted note. Order: grammar (`bad_ref`) → the policy's `checkPath` (a path not
   * in the index and a hidden note both give `not_found` with the same message, so refusals cannot probe for
   * hidden lore; future-era and out-of-prefix notes give `out_of_scope`) → admitted (`not_reached`). What
   * names no admitted note is first looked up as an admitted note's name ({@link admittedByName}), once.
   */
  private admittedNote(input: string, label: string, byNames = true): { parsed: ParsedRef; admission: Admission; note: NoteRecord } {
    let parsed: ParsedRef;
    try {
      parsed = parseRef(input, { namespace: this.index.namespace, label });
    } catch (e) {
      if (!isLoretraceError(e)) throw e;
      const byName = byNames ? this.admittedByName(input, label) : null;
      if (byName) return this.admittedNote(byName, label, false);
      throw new Refuse('bad_ref', 'bad_ref', e.message, badRefMessage(label, input, this.index.namespace));
    }
    if (byNames && !parsed.is_prefix && !this.admitted.has(parsed.path)) {
      const byName = this.admittedByName(input, label);
      if (byName) return this.admittedNote(byName, label, false);
    }
    const shown = formatRef(parsed.namespace, parsed.path, parsed.fragment);
    if (parsed.is_prefix) throw new Refuse('bad_ref', 'folder_prefix', `${label} ${JSON.stringify(input)} names a folder; expected a note (path ending in .md)`, `${label} ${shownInput(input)} names a folder; expected a note (path ending in .md)`);
    const check = checkPath(this.compiled, parsed.path);
    if (!check.ok) {
      // "Not yours" is decided from the path alone (scope rules, hidden rules left out), so an existing, an
      // absent and a hidden out-of-prefix note get the same answer; the ledger keeps the real reason
      // (`prefix_denied` / `not_found` / `hidden_ref`).
      const byPath = checkPathPrefixes(this.compiled, parsed.path);
      const code = !byPath.ok && refusalCodeFor(byPath.reason) === 'out_of_scope' ? 'out_of_scope' : refusalCodeFor(check.reason);
      throw new Refuse(code, check.reason, `${label} ${shown}: ${check.detail}`, code === 'not_found' ? notFoundMessage(shown)
        : code === 'out_of_scope' ? outOfScopeMessage(label, shown, this.compiled.allowed_prefixes.map((p) => `${this.index.namespace}:${p}`))
          : `${label} ${shownInput(shown)} is refused by this packet's traversal policy (${code})`);
    }
    const note = this.notes.get(parsed.path);
    if (!note) throw new Refuse('not_found', 'not_found', `${label} ${shown}: no note ${parsed.path} in the index`, notFoundMessage(shown));
    const admission = this.admitted.get(parsed.path);
    if (!admission) {
      throw new Refuse('not_reached', 'not_reached', `${label} ${shown} is allowed by the policy but not reached: it is neither a seed nor a scope note nor followed`,
        `${label} ${shown} is not reached yet: read a seed or scope note and lore_follow a link to it`);
    }
    return { parsed, admission, note };
  }

  /**
   * The ref of the one ADMITTED note whose title, alias, file name or extension-less path is what the
   * responder typed (`Cold Wake Panic`, `FixtureLore:Blackout#Aftermath`), with the typed fragment — the
   * lookup `loretrace show` does (`notesNamed`), over the admitted set only: a name no admitted note has is
   * answered exactly as before (no oracle on hidden or out-of-scope notes). Null when no admitted note has
   * the name; a name several admitted notes share is `bad_ref` naming them (all admitted, so nothing leaks).
   */
  private admittedByName(input: string, label: string): string | null {
    const { name, fragment } = splitNameAndFragment(this.index, input);
    const named = notesNamed(this.index, name, (path) => this.admitted.has(path));
    if (named.length === 0) return null;
    if (named.length > 1) {
      const refs = named.map((n) => this.noteRef(n.path));
      const msg = `${label} ${shownInput(input)} names ${named.length} admitted notes (${refs.join(', ')}); give the ref of one`;
      throw new Refuse('bad_ref', 'ambiguous_name', msg, msg);
    }
    return `${this.noteRef(named[0]!.path)}${fragment}`;
  }

  /**
   * The admitted set as a prepared search corpus, rebuilt only when a note was admitted since the last
   * search (admissions only grow, so the count tells).
   */
  private searchCorpus(): SearchCorpus {
    if (this.corpus === null || this.corpus.size !== this.admitted.size) {
      this.corpus = { size: this.admitted.size, corpus: searchCorpus(this.admitted.keys() as Iterable<VaultPath>, withheldChunks(this.compiled)) };
    }
    return this.corpus.corpus;
  }

  private chunksOf(path: string): Chunk[] {
    return this.chunksByPath.get(path) ?? [];
  }

  /**
   * The line numbers the responder sees in a note (src/proxy/withhold.ts `lineView`): each hidden section is
   * one line, so no number given or accepted tells its length; disk lines where the note hides nothing.
   */
  private viewOf(note: NoteRecord): LineView {
    let view = this.views.get(note.path);
    if (!view) {
      view = lineView(note.line_count, sectionsOf(this.compiled, note.path));
      this.views.set(note.path, view);
    }
    return view;
  }

  private async loreSearch(args: { query: string; k?: number | undefined }) {
    const query = args.query;
    if (query.trim() === '') throw new Refuse('bad_request', 'empty_query', 'lore_search: query is blank; expected search words');
    const left = this.budgets.max_results - this.used.results;
    if (left <= 0) throw new Refuse('budget_exhausted', 'max_results', `the session's result budget (${this.budgets.max_results} hits) is spent`);
    const k = Math.min(args.k ?? this.limits.default_k, this.limits.max_k, left);
    // BM25 statistics from the admitted set only (`corpus`): a score then cannot reveal whether a hidden or
    // out-of-scope note contains a word.
    const hits = search(this.index, query, { k, corpus: this.searchCorpus() });
    // Defence in depth: drop any hit outside the admitted set (search must already have done so).
    const kept = hits.filter((h) => this.admitted.has(h.path)).slice(0, k);
    this.used.results += kept.length;
    // Hits give the view lines of their chunks (a chunk of a hidden section is never a hit).
    const viewLines = (h: { path: string; line_start: number; line_end: number }) => {
      const note = this.notes.get(h.path);
      const v = note ? this.viewOf(note) : null;
      return v ? { line_start: v.toView(h.line_start), line_end: v.toView(h.line_end) } : { line_start: h.line_start, line_end: h.line_end };
    };
    const results = kept.map((h) => ({
      ref: h.ref, path: h.path, chunk_index: h.chunk_index, ...viewLines(h),
      snapshot_id: this.index.snapshot_id, heading_path: h.heading_path.map((x) => escapeInvisible(x).text), score: h.score,
    }));
    const result: ToolResult<'lore_search'> = {
      notice: LORE_DATA_NOTICE, snapshot_id: this.index.snapshot_id, query, k, results, budgets_left: this.budgetsLeft(),
    };
    return {
      result,
      outcome: {
        status: 'ok' as const,
        snapshot_id: this.index.snapshot_id,
        results: kept.map((r) => ({ ref: r.ref, path: r.path, chunk_index: r.chunk_index, line_start: r.line_start, line_end: r.line_end, score: r.score })),
        chars_returned: 0,
      },
    };
  }

  private async loreRead(args: { ref: string; line_start?: number | undefined; line_end?: number | undefined }) {
    const { parsed, admission, note } = this.admittedNote(args.ref, 'ref');
    const shown = formatRef(parsed.namespace, parsed.path, parsed.fragment);
    const view = this.viewOf(note);
    // `#La-Lb` and the line arguments are view lines; past the view's last line is past the note's end.
    const frag = parsed.fragment;
    const onDisk: ParsedRef = frag?.kind === 'lines' && view.lineCount !== note.line_count
      ? { ...parsed, fragment: frag.end > view.lineCount ? { kind: 'lines', start: note.line_count + 1, end: note.line_count + 1 } : { kind: 'lines', start: view.firstDisk(frag.start), end: view.lastDisk(frag.end) } }
      : parsed;
    let range;
    try {
      range = resolveRef(this.index, onDisk);
    } catch (e) {
      if (isLoretraceError(e) && e.code === 'not_found') throw new Refuse('not_found', 'fragment_not_found', e.message, notFoundMessage(shown));
      // An admitted note kept without text: resolveRef's binary_file / not_utf8, answered as a bad request
      // naming the finding (the note is there, its bytes are not text), never an empty read.
      if (isLoretraceError(e) && (e.code === 'binary_file' || e.code === 'not_utf8')) throw new Refuse('bad_request', e.code, `lore_read: ${e.message}`);
      throw e;
    }
    // An empty note has no line to serve, and none to withhold: it is answered as such before the
    // hidden-section test, and before any line argument is compared with its (empty) range 1-0.
    if (note.line_count === 0) throw new Refuse('bad_request', 'empty_note', `lore_read: ${shown} has no lines`);
    const sections = sectionsOf(this.compiled, note.path);
    // A ref that names only hidden lines (the hidden heading under any spelling, one of its chunks) is
    // answered as a missing fragment, before its lines can show in a message.
    if (whollyWithheld(range.line_start, range.line_end, sections)) {
      throw new Refuse('not_found', 'hidden_section', `ref ${shown}: lines ${range.line_start}-${range.line_end} of ${note.path} are a hidden section`, notFoundMessage(shown));
    }
    const refStart = view.toView(range.line_start);
    const refEnd = view.toView(range.line_end);
    const viewStart = args.line_start ?? refStart;
    const viewEnd = args.line_end ?? refEnd;
    if (viewStart > viewEnd) {
      throw new Refuse('bad_request', 'lines_reversed', `lore_read: line_start ${viewStart} is after line_end ${viewEnd}; expected line_start ≤ line_end, both inside ${shown} (lines ${refStart}-${refEnd})`);
    }
    if (viewStart < refStart || viewEnd > refEnd) {
      throw new Refuse('bad_request', 'lines_outside_ref', `lore_read: lines ${viewStart}-${viewEnd} are not inside ${shown} (lines ${refStart}-${refEnd}); expected ${refStart} ≤ line_start ≤ line_end ≤ ${refEnd}`);
    }
    const start = args.line_start === undefined ? range.line_start : view.firstDisk(viewStart);
    const end = args.line_end === undefined ? range.line_end : view.lastDisk(viewEnd);
    const b = this.budgets;
    if (b.max_reads !== null && this.used.reads >= b.max_reads) {
      throw new Refuse('budget_exhausted', 'max_reads', `the session's read budget (${b.max_reads} reads, policy max_chunks) is spent`);
    }
    if (b.max_notes !== null && !this.notesRead.has(note.path) && this.notesRead.size >= b.max_notes) {
      throw new Refuse('budget_exhausted', 'max_notes', `the session's note budget (${b.max_notes} notes, policy max_refs) is spent; notes already read stay readable`);
    }
    if (whollyWithheld(start, end, sections)) {
      throw new Refuse('not_found', 'hidden_section', `lore_read: lines ${start}-${end} of ${note.path} are a hidden section`, notFoundMessage(shown));
    }
    const file = await readIndexedLines(this.index, note.path);
    const hidden = withholdSections(file.lines, start, end, sections);
    const text = hidden.text;
    if (text.length > this.limits.max_chars_per_read) {
      throw new Refuse('bad_request', 'read_too_large', `lore_read: ${shown} lines ${start}-${end} hold ${text.length} characters, more than ${this.limits.max_chars_per_read} per read; ask for a chunk (#chunkN) or a narrower line range`);
    }
    if (this.used.chars + text.length > b.max_chars_returned) {
      throw new Refuse('budget_exhausted', 'max_chars_returned', `returning ${text.length} more characters would pass the session's budget of ${b.max_chars_returned} characters (${b.max_chars_returned - this.used.chars} left)`);
    }
    const withheldIds = new Set(sections.flatMap((x) => x.chunks));
    const chunks = this.chunksOf(note.path).filter((c) => !withheldIds.has(c.chunk_index));
    const ns = this.index.namespace;
    // One returned range per visible chunk the read touches (a trace entry's range must lie inside its chunk).
    const pieces: ServedRange[] = [];
    for (const c of chunks) {
      const a = Math.max(start, c.line_start);
      const z2 = Math.min(end, c.line_end);
      if (a > z2) continue;
      const pieceText = sliceLines(file.lines, a, z2);
      const whole = a === c.line_start && z2 === c.line_end;
      pieces.push({
        ref: formatRef(ns, note.path, whole ? { kind: 'chunk', index: c.chunk_index } : { kind: 'lines', start: a, end: z2 }),
        path: note.path, chunk_index: c.chunk_index, line_start: a, line_end: z2, file_sha256: file.sha256,
        text_sha256: createHash('sha256').update(pieceText, 'utf8').digest('hex'),
        via: admission.via, depth: admission.depth,
      });
    }
    const first = chunks.find((c) => c.line_start <= start && start <= c.line_end) ?? chunks.find((c) => c.line_end >= start) ?? null;
    const chunkIndex = first?.chunk_index ?? 0;
    const sameChunk = first !== null && first.line_start <= start && end <= first.line_end;
    const ref = sameChunk && first.line_start === start && first.line_end === end
      ? formatRef(ns, note.path, { kind: 'chunk', index: first.chunk_index })
      : start === 1 && end === note.line_count
        ? formatRef(ns, note.path)
        : formatRef(ns, note.path, { kind: 'lines', start: view.toView(start), end: view.toView(end) });

    this.used.reads += 1;
    this.used.chars += text.length;
    if (!this.notesRead.has(note.path)) {
      this.notesRead.add(note.path);
      (admission.via === 'follow' ? this.followed : this.consulted).push(this.noteRef(note.path));
    }
    // Invisible characters are escaped in what the client gets; the served ranges' text_sha256 stays the
    // hash of the vault's text (so coverage and ledger export re-derive it), payload_hash that of the answer.
    const served = escapeInvisible(text);
    const headings = (first?.heading_path ?? []).map((h) => escapeInvisible(h).text);
    const result: ToolResult<'lore_read'> = {
      notice: LORE_DATA_NOTICE,
      snapshot_id: this.index.snapshot_id,
      data: {
        ref, requested_ref: args.ref, path: note.path, chunk_index: chunkIndex, line_start: view.toView(start), line_end: view.toView(end),
        snapshot_id: this.index.snapshot_id, heading_path: headings, via: admission.via,
        depth: admission.depth, content: served.text, escaped_characters: served.escaped,
        withheld: hidden.withheld.length > 0,
      },
      budgets_left: this.budgetsLeft(),
    };
    return {
      result,
      outcome: {
        status: 'ok' as const, snapshot_id: this.index.snapshot_id, served: pieces, chars_returned: text.length,
        ...(served.escaped.count > 0 ? { escaped_characters: served.escaped } : {}),
        ...(hidden.withheld.length > 0 ? { withheld: hidden.withheld } : {}),
      },
    };
  }

  /**
   * The follow decision for one link from an admitted note at `depth`. The target's `checkPath` runs first
   * so that a hidden or an out-of-scope target (outside `allowed_prefixes`, under a `deny_prefix:`,
   * future-era) answers `not_found` whatever the depth — the same as an unresolved link, so a link's answer
   * never tells whether lore the packet may not see exists; the ledger keeps the real reason. Then
   * `checkEdge` (depth, path rules, follow_link_classes) decides.
   */
  private followDecision(link: LinkRecord, depth: number): { ok: true } | { ok: false; code: RefusalCode; reason: string; detail: string } {
    const target = edgeTarget(link);
    if (target === null) return { ok: false, code: 'not_found', reason: 'unresolved', detail: `link ${link.raw} does not resolve to a note` };
    const p = checkPath(this.compiled, target);
    if (!p.ok && ['not_found', 'out_of_scope'].includes(refusalCodeFor(p.reason))) return { ok: false, code: 'not_found', reason: p.reason, detail: p.detail };
    const r = checkEdge(this.compiled, link, depth);
    if (r.ok) return { ok: true };
    return { ok: false, code: refusalCodeFor(r.reason), reason: r.reason, detail: r.detail };
  }

  private async loreLinks(args: { ref: string }) {
    const { note, admission } = this.admittedNote(args.ref, 'ref');
    const links = (this.linksByPath.get(note.path) ?? []).filter(isLoreLink);
    const out: ToolResult<'lore_links'>['links'] = [];
    const recorded: NonNullable<Extract<LedgerOutcome, { status: 'ok' }>['links']> = [];
    for (const l of links) {
      const decision = this.followDecision(l, admission.depth);
      const target = resolvedPath(l);
      // A hidden, missing or out-of-scope target: no ref, no classes (the decision says not_found for all three).
      const hiddenOrMissing = !decision.ok && decision.code === 'not_found';
      const targetNote = target && !hiddenOrMissing ? this.notes.get(target) : undefined;
      const targetRef = targetNote ? this.noteRef(targetNote.path) : null;
      const adm = targetNote ? this.admitted.get(targetNote.path) : undefined;
      // A target the session already admitted (at a shallower depth) is readable whatever this hop's depth:
      // `depth_exceeded` would misstate it, so the code says `already_admitted` (lore_follow still refuses
      // the hop itself; the ledger records the policy's own decision).
      const code = decision.ok ? null : decision.code === 'depth_exceeded' && adm ? 'already_admitted' : decision.code;
      out.push({
        line: this.viewOf(note).toView(l.line), column: l.column, syntax: l.syntax, position: l.position, target: l.target, fragment: l.fragment,
        target_ref: targetRef, target_classes: targetNote ? targetNote.classes : [],
        admitted_depth: adm ? adm.depth : null,
        follow: { allowed: decision.ok, code, depth: admission.depth + 1 },
      });
      recorded.push({ line: l.line, column: l.column, target_ref: targetRef, follow: decision.ok ? 'ok' : `${decision.code}:${decision.reason}` });
    }
    const result: ToolResult<'lore_links'> = {
      notice: LORE_DATA_NOTICE, snapshot_id: this.index.snapshot_id,
      from: { ref: this.noteRef(note.path), path: note.path, depth: admission.depth }, links: out,
    };
    return { result, outcome: { status: 'ok' as const, snapshot_id: this.index.snapshot_id, links: recorded, chars_returned: 0 } };
  }

  private async loreFollow(args: { from_ref: string; target: string }) {
    const { note: from, admission } = this.admittedNote(args.from_ref, 'from_ref');
    const links = (this.linksByPath.get(from.path) ?? []).filter(isLoreLink);
    const asWritten = (l: LinkRecord) => [l.target, l.fragment === null ? l.target : `${l.target}#${l.fragment}`, l.raw];
    let matches = links.filter((l) => asWritten(l).includes(args.target));
    let targetPath: string | null = null;
    if (matches.length === 0) {
      let parsed: ParsedRef;
      try {
        parsed = parseRef(args.target, { namespace: this.index.namespace, label: 'target' });
      } catch (e) {
        if (isLoretraceError(e)) {
          throw new Refuse('bad_ref', 'bad_ref', `${e.message} (and it is not the target of any link in ${from.path} as written)`, badRefMessage('target', args.target, this.index.namespace));
        }
        throw e;
      }
      targetPath = parsed.path;
      matches = links.filter((l) => resolvedPath(l) === parsed.path);
    }
    const shown = args.target;
    if (matches.length === 0) {
      // No link of from_ref leads to the target: one answer, `not_found`, whether the target was given by name
      // or by ref and whether it names a visible, hidden or missing note (the client message echoes only the
      // input, so it says nothing about which); the ledger's message says which it was.
      const check = targetPath === null ? null : checkPath(this.compiled, targetPath);
      const which = targetPath === null ? 'it is no link target as written and no ref'
        : !this.notes.has(targetPath) ? `${targetPath} is not in the index`
          : check && !check.ok ? `${targetPath}: ${check.detail}` : `${targetPath} exists`;
      throw new Refuse('not_found', 'no_such_link', `target ${JSON.stringify(shown)}: no link in ${from.path} leads to it (${which}); lore_follow only follows links that exist in the index`,
        noSuchLinkMessage(this.noteRef(from.path), shown));
    }
    let firstRefusal: { code: RefusalCode; reason: string; detail: string; link: LinkRecord } | null = null;
    let chosen: LinkRecord | null = null;
    for (const l of matches) {
      const d = this.followDecision(l, admission.depth);
      if (d.ok) {
        chosen = l;
        break;
      }
      if (!firstRefusal) firstRefusal = { code: d.code, reason: d.reason, detail: d.detail, link: l };
    }
    if (!chosen) {
      const f = firstRefusal!;
      throw new Refuse(f.code, f.reason, `lore_follow ${from.path} line ${f.link.line} ${f.link.raw}: ${f.detail}`,
        f.code === 'not_found' ? noSuchLinkMessage(this.noteRef(from.path), shown) : `following ${shownInput(shown)} from ${this.noteRef(from.path)} is refused by the traversal policy (${f.code})`);
    }
    const target = resolvedPath(chosen)!;
    const depth = admission.depth + 1;
    const existing = this.admitted.get(target);
    let newly = false;
    if (!existing) {
      this.admitted.set(target, { path: target, depth, via: 'follow', from: from.path });
      newly = true;
    } else if (existing.depth > depth) {
      existing.depth = depth;
      existing.from = from.path;
    }
    const adm = this.admitted.get(target)!;
    const admitted = {
      ref: this.noteRef(target), path: target, depth: adm.depth, from_ref: this.noteRef(from.path),
      link: { line: this.viewOf(from).toView(chosen.line), column: chosen.column, syntax: chosen.syntax }, newly_admitted: newly,
    };
    const result: ToolResult<'lore_follow'> = {
      notice: LORE_DATA_NOTICE, snapshot_id: this.index.snapshot_id, admitted, budgets_left: this.budgetsLeft(),
    };
    return {
      result,
      outcome: {
        status: 'ok' as const,
        snapshot_id: this.index.snapshot_id,
        admitted: { ref: admitted.ref, path: target, depth: adm.depth, from_ref: admitted.from_ref, link_line: chosen.line, link_column: chosen.column, newly_admitted: newly },
        chars_returned: 0,
      },
    };
  }

  /**
   * The policy receipt `research_status` shows (computed once): the policy compiled again as the responder's view
   * (`responderView`: `matches` over the notes `checkPath` admits, the hidden-lore stop rule without counts),
   * less the rows about hidden lore (`hidden_ref`, `hidden_prefix`, `hidden_note`), which would name what they
   * hide, and the `future_era_prefix` rows, which by default are the vault's Post-Elysium/ folders and so would
   * tell that future-era lore exists. The ledger's `SESSION_OPENED` keeps the runner's receipt, every row and count.
   */
  private responderReceipt(): PolicyReceiptRow[] {
    if (this.statusReceipt === null) {
      const policy = this.packet.lore_access.traversal_policy!;
      const view = compilePolicy(policy, {
        index: this.index, packet: this.packet,
        responderView: { admits: (path) => checkPath(this.compiled, path).ok },
      });
      this.statusReceipt = view.receipt.filter((r) => !String(r.kind).startsWith('hidden') && r.kind !== 'future_era_prefix');
    }
    return this.statusReceipt;
  }

  private async researchStatus() {
    const b = this.budgets;
    const budget = (limit: number | null, used: number) => ({ limit, used, left: limit === null ? null : Math.max(0, limit - used) });
    const receipt = this.responderReceipt();
    const result: ToolResult<'research_status'> = {
      notice: LORE_DATA_NOTICE,
      snapshot_id: this.index.snapshot_id,
      packet_id: this.packet.packet_id,
      max_link_depth: this.compiled.max_link_depth,
      admitted: [...this.admitted.values()]
        .sort((x, y) => x.depth - y.depth || (x.path < y.path ? -1 : x.path > y.path ? 1 : 0))
        .map((a) => ({ ref: this.noteRef(a.path), path: a.path, depth: a.depth, via: a.via, from_ref: a.from ? this.noteRef(a.from) : null })),
      consulted_refs: [...this.consulted],
      followed_refs: [...this.followed],
      calls: { total: this.totals.tool_calls! + 1, ok: this.totals.ok! + 1, refused: this.totals.refused! },
      budgets: {
        calls: budget(b.max_calls, this.used.calls),
        results: budget(b.max_results, this.used.results),
        chars: budget(b.max_chars_returned, this.used.chars),
        notes: budget(b.max_notes, this.notesRead.size),
        reads: budget(b.max_reads, this.used.reads),
      },
      policy_receipt: receipt as unknown as ToolResult<'research_status'>['policy_receipt'],
      receipt_note: 'Rows about hidden refs are enforced but not listed here.',
    };
    return { result, outcome: { status: 'ok' as const, snapshot_id: this.index.snapshot_id, chars_returned: 0 } };
  }
}

/** Options of {@link openProxySession}. */
export interface OpenProxySessionOptions {
  /** Vault root folder. */
  lore: string;
  /** Packet JSON file. */
  packetPath: string;
  /** Ledger file to create (must not exist). */
  ledgerPath: string;
  /**
   * Server limits; keys left out take their `DEFAULT_LIMITS` value, a key that is no limit or a value that
   * is not an integer ≥ 1 is refused (`bad_option`, src/proxy/limits.ts `resolveLimits`).
   */
  limits?: Partial<ServerLimits>;
  /** Passed to `indexVault` (index dir, config …). */
  indexOptions?: IndexOptions;
  /**
   * Runner key that signs the ledger's `SESSION_CLOSED` record (`serve --signing-key`,
   * src/receipts/signing.ts `readSigningKey`); none: the ledger is unsigned.
   */
  signer?: LedgerSigner | null;
  /** Largest packet file accepted, in bytes (default 8 MiB, `DEFAULT_MAX_INPUT_BYTES`); checked before reading. */
  maxInputBytes?: number;
  clock?: ProxyClock;
}

/**
 * Open a session the way `loretrace serve` does: read and hash the packet, validate it (`validatePacket`),
 * require `lore_access.mode = responder_scoped_repository_search` with a traversal_policy, index the
 * vault, compile the policy, create the ledger and write its `SESSION_OPENED` record.
 *
 * @throws LoretraceError `bad_option` for a bad `limits` entry (checked first), `packet_unreadable`, `input_too_large`, `not_utf8`, `bad_json`, `duplicate_key`, `packet_invalid` (first errors in the message, all
 *   in `details.data.errors`), `packet_wrong_mode`, policy compile errors (`bad_policy` …), indexer errors,
 *   `ledger_exists` / `ledger_unwritable`. Nothing is written when any of these is thrown.
 */
export async function openProxySession(options: OpenProxySessionOptions): Promise<ProxySession> {
  const limits = resolveLimits(options.limits);
  const packetFile = options.packetPath;
  let bytes: Buffer;
  try {
    bytes = await readInputBytes(packetFile, packetFile, { maxBytes: options.maxInputBytes });
  } catch (e) {
    if (isLoretraceError(e) && e.code === 'input_too_large') throw e;
    throw new LoretraceError('packet_unreadable', `cannot read packet ${packetFile}: ${(e as Error).message}`, { file: packetFile }, 2);
  }
  const packetSha256 = createHash('sha256').update(bytes).digest('hex');
  const value = decodeJsonDocument(bytes, packetFile, { maxBytes: options.maxInputBytes });
  const report = validatePacket(value, { file: packetFile });
  if (!report.valid) {
    const n = report.errors.length;
    const first = report.errors.slice(0, 3).map((e) => `${e.pointer || '/'}: ${e.message}`).join('; ');
    const more = n > 3 ? `; and ${n - 3} more` : '';
    throw new LoretraceError('packet_invalid', `packet ${packetFile} is not a valid responder packet (${n} ${n === 1 ? 'error' : 'errors'}: ${first}${more}); the proxy serves only valid packets`, {
      file: packetFile, pointer: report.errors[0]?.pointer, data: { errors: report.errors },
    });
  }
  const packet = value as ResponderPacket;
  if (packet.lore_access.mode !== 'responder_scoped_repository_search') {
    throw new LoretraceError('packet_wrong_mode', `packet ${packetFile} has lore_access.mode ${JSON.stringify(packet.lore_access.mode)}; the proxy serves only responder_scoped_repository_search packets`, {
      file: packetFile, pointer: '/lore_access/mode', expected: 'responder_scoped_repository_search',
    });
  }
  const policy = packet.lore_access.traversal_policy;
  if (!policy) {
    throw new LoretraceError('packet_invalid', `packet ${packetFile} has no lore_access.traversal_policy; the proxy needs one to enforce`, { file: packetFile, pointer: '/lore_access/traversal_policy' });
  }
  const index = await indexVault(resolvePath(options.lore), options.indexOptions);
  const compiled = compilePolicy(policy, { index, packet });
  const ledger = LedgerWriter.create(options.ledgerPath, { signer: options.signer ?? null });
  const session = new ProxySession({
    index, packet, packetSha256, packetFile: basename(packetFile), compiled, ledger, limits, clock: options.clock,
  });
  try {
    await session.start();
  } catch (e) {
    await ledger.close();
    throw e;
  }
  return session;
}
