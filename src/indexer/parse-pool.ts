/**
 * Parsing many notes: `parseNote` plus search token data, in worker threads when it pays off.
 *
 * Rule (docs/INDEX.md "Cold index and worker threads"): a pool of `availableParallelism()` workers
 * (at most 4) is used when more than {@link WORKER_THRESHOLD} notes need parsing AND the compiled worker
 * file `parse-worker.js` exists next to this module (that is, when loretrace runs from `dist/`). Running
 * from TypeScript sources (vitest, tsx) or for small batches, notes are parsed in the calling thread.
 * Both paths run the same pure function ({@link parseBatch}), so results are byte-identical.
 *
 * Work is sent in batches (up to {@link BATCH_NOTES} notes or {@link BATCH_BYTES} bytes), the bytes of a
 * batch in one transferred ArrayBuffer (no copy), two batches in flight per worker so no worker waits.
 * A batch comes back as JSON lines (the store's record lines, serialised once, in the worker) and the
 * batch's search postings packed into typed arrays — no per-note message, no second serialisation.
 *
 * Streaming (`onBatch`, used by a cold build): batches are handed on in job order as they complete and
 * are not kept; once consumed, their buffers go back to the worker that produced them, and input buffers
 * come back with the answers, so the same few buffers circulate (peak RSS, docs/PERFORMANCE.md: dead ArrayBuffers
 * stay resident until V8 happens to collect them).
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { VaultConfig, VaultPath } from '../types.js';
import { parseNote } from '../notes/parse.js';
import { packTokens, type PackedTokens } from '../search/postings.js';
import { hasStemmedField, noteTokens, type NoteTokens } from '../search/tokenize.js';

/** Notes to parse above which worker threads are used (when available). */
export const WORKER_THRESHOLD = 200;
/** Most notes in one worker batch. */
export const BATCH_NOTES = 64;
/** Most bytes in one worker batch (a bigger single note forms its own batch). */
export const BATCH_BYTES = 1 << 20;

/**
 * What parse produces for one note, as the store's JSON lines in UTF-8 (each `JSON.stringify` of a plain
 * object, no trailing newline): `note` = `{ path, sha256, note, findings }`, `chunks` = `{ path, chunks }`,
 * `links` = `{ path, links }` (links with resolution pending, external or tag). The byte arrays are views
 * into one buffer per batch and family (transferred from the worker, never copied).
 */
export interface ParsedLines {
  path: VaultPath;
  sha256: string;
  note: Uint8Array;
  chunks: Uint8Array;
  links: Uint8Array;
  /** `note.classes` (the search doc table filters on it). */
  classes: string[];
  chunk_count: number;
  link_count: number;
}

/** A parsed batch: its notes' lines, in job order, and their packed search postings. */
export interface ParsedBatch {
  records: ParsedLines[];
  tokens: PackedTokens;
}

/** A batch as it crosses the thread boundary: one UTF-8 buffer per family plus line ends. */
export interface WireBatch {
  paths: string[];
  shas: string[];
  classes: string[][];
  chunkCounts: number[];
  linkCounts: number[];
  buffers: { note: ArrayBuffer; chunks: ArrayBuffer; links: ArrayBuffer };
  ends: { note: number[]; chunks: number[]; links: number[] };
  tokens: PackedTokens;
}

const FAMILIES = ['note', 'chunks', 'links'] as const;

/**
 * Allocator of wire buffers: an ArrayBuffer of at least `bytes` bytes. A parse worker hands out buffers
 * the main thread has sent back (see {@link parseAll}), so the buffers of a cold build circulate instead
 * of piling up as garbage in the main thread; the bytes past a batch's data are never read.
 */
export type WireAlloc = (bytes: number) => ArrayBuffer;

/**
 * Pack parsed lines for the transfer (one buffer per family). With `alloc`, the token arrays are copied
 * into allocated buffers too (so every transferred buffer can be recycled).
 */
export function toWire(
  b: { paths: string[]; shas: string[]; classes: string[][]; chunkCounts: number[]; linkCounts: number[]; lines: Record<(typeof FAMILIES)[number], string[]>; tokens: PackedTokens },
  alloc?: WireAlloc,
): WireBatch {
  const buffers = {} as WireBatch['buffers'];
  const ends = {} as WireBatch['ends'];
  for (const fam of FAMILIES) {
    const lines = b.lines[fam];
    const e: number[] = [];
    let total = 0;
    for (const l of lines) e.push((total += Buffer.byteLength(l, 'utf8')));
    const ab = alloc ? alloc(total) : new ArrayBuffer(total);
    const view = Buffer.from(ab, 0, total);
    let o = 0;
    for (const l of lines) o += view.write(l, o, 'utf8');
    buffers[fam] = ab;
    ends[fam] = e;
  }
  let tokens = b.tokens;
  if (alloc) {
    const postings = new Uint32Array(alloc(tokens.postings.byteLength), 0, tokens.postings.length);
    postings.set(tokens.postings);
    const lengths = new Uint32Array(alloc(tokens.lengths.byteLength), 0, tokens.lengths.length);
    lengths.set(tokens.lengths);
    tokens = { ...tokens, postings, lengths };
  }
  return { paths: b.paths, shas: b.shas, classes: b.classes, chunkCounts: b.chunkCounts, linkCounts: b.linkCounts, buffers, ends, tokens };
}

/** Unpack a {@link WireBatch} into per-note views. */
export function fromWire(w: WireBatch): ParsedBatch {
  const views = FAMILIES.map((fam) => {
    const all = new Uint8Array(w.buffers[fam]);
    let start = 0;
    return w.ends[fam].map((end) => {
      const v = all.subarray(start, end);
      start = end;
      return v;
    });
  });
  return {
    records: w.paths.map((path, i) => ({
      path, sha256: w.shas[i]!, note: views[0]![i]!, chunks: views[1]![i]!, links: views[2]![i]!,
      classes: w.classes[i]!, chunk_count: w.chunkCounts[i]!, link_count: w.linkCounts[i]!,
    })),
    tokens: w.tokens,
  };
}

/** Transferable buffers of a wire batch (distinct). */
export function transferList(w: WireBatch): ArrayBuffer[] {
  return [...new Set([w.buffers.note, w.buffers.chunks, w.buffers.links, w.tokens.postings.buffer as ArrayBuffer, w.tokens.lengths.buffer as ArrayBuffer])];
}

/** One parse job. */
export interface ParseJob {
  path: VaultPath;
  sha256: string;
  bytes: Uint8Array;
}

/** Parse jobs in order into a {@link WireBatch}; pure and deterministic (runs in the worker too). */
export function parseWire(jobs: readonly ParseJob[], config: VaultConfig, alloc?: WireAlloc): WireBatch {
  const lines = { note: [] as string[], chunks: [] as string[], links: [] as string[] };
  const tokens: NoteTokens[] = [];
  const classes: string[][] = [];
  const chunkCounts: number[] = [];
  const linkCounts: number[] = [];
  const stemmed = hasStemmedField(config);
  for (const job of jobs) {
    const parsed = parseNote(job.path, job.bytes, { config, sha256: job.sha256 });
    lines.note.push(JSON.stringify({ path: job.path, sha256: job.sha256, note: parsed.note, findings: parsed.findings }));
    lines.chunks.push(JSON.stringify({ path: job.path, chunks: parsed.chunks }));
    lines.links.push(JSON.stringify({ path: job.path, links: parsed.links }));
    classes.push(parsed.note.classes);
    chunkCounts.push(parsed.chunks.length);
    linkCounts.push(parsed.links.length);
    tokens.push(noteTokens(parsed.note, parsed.chunks, stemmed));
  }
  return toWire({ paths: jobs.map((j) => j.path), shas: jobs.map((j) => j.sha256), classes, chunkCounts, linkCounts, lines, tokens: packTokens(tokens) }, alloc);
}

/** Parse jobs in order (in the calling thread). */
export function parseBatch(jobs: readonly ParseJob[], config: VaultConfig): ParsedBatch {
  return fromWire(parseWire(jobs, config));
}

/**
 * A few spare ArrayBuffers for reuse: `take(n)` hands out the smallest one of at least `n` bytes, else a
 * new one with some headroom (so it can serve later, slightly larger batches); `give` keeps at most
 * {@link BufferPool.MAX} buffers (the smallest are dropped).
 */
export class BufferPool {
  static readonly MAX = 16;
  private readonly free: ArrayBuffer[] = [];

  take(n: number): ArrayBuffer {
    if (n === 0) return new ArrayBuffer(0);
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      const size = this.free[i]!.byteLength;
      if (size >= n && (best < 0 || size < this.free[best]!.byteLength)) best = i;
    }
    if (best >= 0) return this.free.splice(best, 1)[0]!;
    return new ArrayBuffer(Math.ceil((n + (n >> 2)) / 4096) * 4096);
  }

  give(b: ArrayBuffer): void {
    if (b.byteLength === 0) return;
    this.free.push(b);
    if (this.free.length > BufferPool.MAX) {
      let min = 0;
      for (let i = 1; i < this.free.length; i++) if (this.free[i]!.byteLength < this.free[min]!.byteLength) min = i;
      this.free.splice(min, 1);
    }
  }
}

/** Message to a worker: the vault config for the batches that follow (sent at the start of each run). */
export interface ConfigMessage {
  config: VaultConfig;
}

/** Message to a worker: buffers of consumed batches, to reuse for the next answers. */
export interface RecycleMessage {
  recycle: ArrayBuffer[];
}

/** Message to a worker: a batch's paths, hashes and bytes (one transferred buffer, `ends[i]` = end of note i). */
export interface BatchMessage {
  id: number;
  paths: string[];
  shas: string[];
  ends: number[];
  /** The bytes; may be longer than `ends` says (a reused buffer). */
  buffer: ArrayBuffer;
  /** Streaming mode: answer with pooled buffers and send `buffer` back (`input`) for reuse. */
  recycle: boolean;
}

/** Split a batch message back into jobs (views into the transferred buffer). */
export function jobsOf(msg: BatchMessage): ParseJob[] {
  const bytes = new Uint8Array(msg.buffer);
  let start = 0;
  return msg.paths.map((path, i) => {
    const end = msg.ends[i]!;
    const job = { path, sha256: msg.shas[i]!, bytes: bytes.subarray(start, end) };
    start = end;
    return job;
  });
}

/**
 * Idle parse workers are kept this long (ms) for the next {@link parseAll} of the process, then
 * terminated. Reusing them spares the start-up and, above all, the native memory that every new
 * thread leaves behind (its malloc arena): a process that indexes repeatedly (tests, a server that
 * re-indexes, the benchmark's repeated runs) does not grow from run to run. Idle workers never keep the
 * process alive.
 */
export const WORKER_IDLE_MS = 2000;

/** A parse worker of the process-wide pool. */
interface PooledWorker {
  worker: Worker;
  /** Exited or failed: never reused. */
  dead: boolean;
}

const idleWorkers: PooledWorker[] = [];
let idleTimer: NodeJS.Timeout | null = null;

function acquireWorker(file: string): PooledWorker {
  let m = idleWorkers.pop();
  if (!m) {
    const created: PooledWorker = { worker: new Worker(file, { workerData: { config: {} } }), dead: false };
    const gone = () => {
      created.dead = true;
      const at = idleWorkers.indexOf(created);
      if (at >= 0) idleWorkers.splice(at, 1);
    };
    created.worker.on('error', gone); // always listened to, so an idle worker's error is never uncaught
    created.worker.on('exit', gone);
    m = created;
  }
  m.worker.ref();
  return m;
}

function releaseWorker(m: PooledWorker): void {
  if (m.dead) return;
  m.worker.unref();
  idleWorkers.push(m);
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = setTimeout(() => {
    idleTimer = null;
    for (const w of idleWorkers.splice(0)) killWorker(w);
  }, WORKER_IDLE_MS);
  idleTimer.unref();
}

function killWorker(m: PooledWorker): void {
  m.dead = true;
  void m.worker.terminate();
}

function workerFile(): string | null {
  if (!import.meta.url.endsWith('.js')) return null;
  const file = fileURLToPath(new URL('./parse-worker.js', import.meta.url));
  return existsSync(file) ? file : null;
}

/** Options of {@link parseAll}. */
export interface ParseAllOptions {
  config: VaultConfig;
  /** `auto` (default): the rule above; `false`: never; `true`: whenever the worker file exists. */
  workers?: boolean | 'auto';
  /** Called after each parsed batch with (notes done, total). */
  onProgress?: (done: number, total: number) => void;
  /**
   * Streaming: receives every parsed batch in job order, as soon as it and all earlier batches are
   * parsed; the batches are then not kept (`batches` of the result is empty), so a cold build holds at
   * most the few batches in flight. An exception thrown here stops the pool and rejects `parseAll`.
   */
  onBatch?: (batch: ParsedBatch) => void;
}

function batchesOf(jobs: readonly ParseJob[]): ParseJob[][] {
  const out: ParseJob[][] = [];
  let cur: ParseJob[] = [];
  let bytes = 0;
  for (const j of jobs) {
    if (cur.length > 0 && (cur.length >= BATCH_NOTES || bytes + j.bytes.byteLength > BATCH_BYTES)) {
      out.push(cur);
      cur = [];
      bytes = 0;
    }
    cur.push(j);
    bytes += j.bytes.byteLength;
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

/**
 * Parse jobs; batches come back in job order. Reports which path was taken in `threads` (0 = in-thread).
 * Batching never changes results: each note is parsed alone, postings are merged in job order.
 * `jobs` is emptied: each job's bytes are released as soon as its batch is parsed or sent to a worker.
 * The steps: {@link batchesOf}, then {@link parseInThread} or {@link parseInWorkers}, both handing each
 * batch to an {@link inOrderDelivery}.
 */
export async function parseAll(jobs: ParseJob[], options: ParseAllOptions): Promise<{ batches: ParsedBatch[]; threads: number }> {
  const file = options.workers === false ? null : workerFile();
  const useWorkers = file !== null && (options.workers === true || jobs.length > WORKER_THRESHOLD);
  const batches = batchesOf(jobs);
  const run: PoolRun = { batches, total: jobs.length, done: 0, options, delivery: inOrderDelivery(batches.length, options.onBatch) };
  jobs.length = 0; // the batches hold the jobs now, each released when sent
  if (!useWorkers) {
    parseInThread(run);
    return { batches: run.delivery.out, threads: 0 };
  }
  const threads = Math.max(1, Math.min(4, availableParallelism(), batches.length));
  await parseInWorkers(file!, threads, run);
  return { batches: run.delivery.out, threads };
}

/** One {@link parseAll} call: its batches (each emptied once parsed or sent), progress and delivery. */
interface PoolRun {
  batches: ParseJob[][];
  /** Notes to parse / parsed so far (for `onProgress`). */
  total: number;
  done: number;
  options: ParseAllOptions;
  delivery: Delivery;
}

/** Where parsed batches go: kept in `out` by index, or streamed to `onBatch` in job order. */
interface Delivery {
  /** The kept batches (empty when streaming). */
  out: ParsedBatch[];
  /** Hand on batch `i`; after `onBatch`, `recycle` gets the batch's buffers back for its worker. */
  deliver: (i: number, wire: WireBatch, recycle?: (buffers: ArrayBuffer[]) => void) => void;
}

/**
 * Batches finish out of order across workers; they are handed on in job order. Without `onBatch`, each is
 * kept at its index. With it, a batch that finished early waits until every earlier one was handed on;
 * after `onBatch`, the buffers of a worker's batch go back to that worker for reuse (`recycle`).
 */
function inOrderDelivery(count: number, onBatch: ParseAllOptions['onBatch']): Delivery {
  const out = new Array<ParsedBatch>(onBatch ? 0 : count);
  const early = new Map<number, { wire: WireBatch; recycle?: (buffers: ArrayBuffer[]) => void }>();
  let delivered = 0;
  const deliver = (i: number, wire: WireBatch, recycle?: (buffers: ArrayBuffer[]) => void) => {
    if (!onBatch) {
      out[i] = fromWire(wire);
      return;
    }
    early.set(i, { wire, recycle });
    for (let e = early.get(delivered); e !== undefined; e = early.get(delivered)) {
      early.delete(delivered++);
      onBatch(fromWire(e.wire));
      e.recycle?.(transferList(e.wire));
    }
  };
  return { out, deliver };
}

/** Count `notes` more as parsed and report progress. */
function progressed(run: PoolRun, notes: number): void {
  run.done += notes;
  run.options.onProgress?.(run.done, run.total);
}

/** Parse every batch in the calling thread, releasing each batch's bytes as soon as it is parsed. */
function parseInThread(run: PoolRun): void {
  for (let i = 0; i < run.batches.length; i++) {
    const b = run.batches[i]!;
    run.batches[i] = [];
    run.delivery.deliver(i, parseWire(b, run.options.config));
    progressed(run, b.length);
  }
}

/** The batches shared out among the workers of one run: the next to send, and whether the run failed. */
interface Dispatch {
  next: number;
  aborted: boolean;
  /** Notes per batch (kept after the batch's jobs are released, for progress and messages). */
  sizes: number[];
  /** Input buffers come back with the answers and carry the next batches (streaming mode only). */
  inputs: BufferPool;
}

/**
 * Parse the batches on `threads` pooled workers, two batches in flight per worker. On the first failure
 * every worker of the run is terminated and the error rethrown; otherwise the workers go back to the
 * process-wide pool ({@link WORKER_IDLE_MS}).
 */
async function parseInWorkers(file: string, threads: number, run: PoolRun): Promise<void> {
  const dispatch: Dispatch = { next: 0, aborted: false, sizes: run.batches.map((b) => b.length), inputs: new BufferPool() };
  const members = Array.from({ length: threads }, () => acquireWorker(file));
  const detach: (() => void)[] = [];
  try {
    await Promise.all(members.map((member) => driveWorker(member, run, dispatch, detach)));
  } catch (e) {
    for (const d of detach) d();
    for (const m of members) killWorker(m);
    throw e;
  }
  for (const d of detach) d();
  for (const m of members) releaseWorker(m);
}

/**
 * The message carrying batch `i` to a worker: its bytes copied into one transferable buffer (a recycled
 * one when streaming), after which the batch's jobs are released.
 */
function batchMessage(run: PoolRun, dispatch: Dispatch, i: number): [BatchMessage, ArrayBuffer[]] {
  const b = run.batches[i]!;
  const total = b.reduce((s, j) => s + j.bytes.byteLength, 0);
  const ab = run.options.onBatch ? dispatch.inputs.take(total) : new ArrayBuffer(total);
  const buf = new Uint8Array(ab, 0, total);
  const ends: number[] = [];
  let o = 0;
  for (const j of b) {
    buf.set(j.bytes, o);
    o += j.bytes.byteLength;
    ends.push(o);
  }
  const msg: BatchMessage = { id: i, paths: b.map((j) => j.path), shas: b.map((j) => j.sha256), ends, buffer: ab, recycle: run.options.onBatch !== undefined };
  dispatch.sizes[i] = b.length;
  run.batches[i] = []; // the bytes now live in the transferred buffer only
  return [msg, [ab]];
}

/**
 * Feed one worker until no batch is left (resolves) or the run fails (rejects with the first error: a
 * batch the worker could not parse, a delivery that threw, the worker's error or exit). Its listeners are
 * added to `detach` for removal.
 */
function driveWorker(member: PooledWorker, run: PoolRun, dispatch: Dispatch, detach: (() => void)[]): Promise<void> {
  const { options } = run;
  return new Promise<void>((resolve, reject) => {
    const worker = member.worker;
    let inFlight = 0;
    let finished = false;
    const fail = (e: unknown) => {
      if (finished) return;
      finished = true;
      dispatch.aborted = true;
      reject(e);
    };
    const recycle = (buffers: ArrayBuffer[]) => {
      if (!member.dead) worker.postMessage({ recycle: buffers } satisfies RecycleMessage, buffers);
    };
    const feed = () => {
      if (finished) return;
      if (dispatch.aborted) {
        finished = true;
        resolve();
        return;
      }
      while (inFlight < 2 && dispatch.next < run.batches.length) {
        const [msg, transfer] = batchMessage(run, dispatch, dispatch.next++);
        inFlight++;
        worker.postMessage(msg, transfer);
      }
      if (inFlight === 0) {
        finished = true;
        resolve();
      }
    };
    const onMessage = (msg: { id: number; batch?: WireBatch; input?: ArrayBuffer; error?: string }) => {
      if (finished) return;
      if (msg.error !== undefined) {
        fail(new Error(`parse worker failed on a batch of ${dispatch.sizes[msg.id]} notes: ${msg.error}`));
        return;
      }
      inFlight--;
      if (msg.input) dispatch.inputs.give(msg.input);
      try {
        run.delivery.deliver(msg.id, msg.batch!, options.onBatch ? recycle : undefined);
      } catch (e) {
        fail(e);
        return;
      }
      progressed(run, dispatch.sizes[msg.id]!);
      feed();
    };
    const onError = (e: Error) => fail(e);
    const onExit = (code: number) => fail(new Error(`parse worker exited unexpectedly (exit code ${code})`));
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    detach.push(() => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    });
    worker.postMessage({ config: options.config } satisfies ConfigMessage);
    feed();
  });
}
