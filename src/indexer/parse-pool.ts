/**
 * Parsing many notes: `parseNote` plus search token data, in worker threads when it pays off.
 *
 * Rule (docs/INDEX.md "Cold index and worker threads"): a pool of `availableParallelism()` workers
 * (at most 4) is used when more than {@link WORKER_THRESHOLD} notes need parsing AND the compiled worker
 * file `parse-worker.js` exists next to this module (that is, when loretrace runs from `dist/`). Running
 * from TypeScript sources (vitest, tsx) or for small batches, notes are parsed in the calling thread.
 * Both paths run the same pure function ({@link parseRecord}), so results are identical.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Finding } from '../errors.js';
import type { Chunk, LinkRecord, NoteRecord, VaultConfig, VaultPath } from '../types.js';
import { parseNote } from '../notes/parse.js';
import { noteTokens, type NoteTokens } from '../search/tokenize.js';

/** Notes to parse above which worker threads are used (when available). */
export const WORKER_THRESHOLD = 200;

/** Everything parse produces for one note (what the store keeps per note). */
export interface ParsedRecord {
  path: VaultPath;
  sha256: string;
  note: NoteRecord;
  chunks: Chunk[];
  /** Links with resolution pending (or external/tag). */
  links: LinkRecord[];
  findings: Finding[];
  tokens: NoteTokens;
}

/** One parse job. */
export interface ParseJob {
  path: VaultPath;
  sha256: string;
  bytes: Uint8Array;
}

/** Parse one note and compute its search tokens. Pure; runs in the worker too. */
export function parseRecord(job: ParseJob, config: VaultConfig): ParsedRecord {
  const parsed = parseNote(job.path, job.bytes, { config, sha256: job.sha256 });
  return {
    path: job.path,
    sha256: job.sha256,
    note: parsed.note,
    chunks: parsed.chunks,
    links: parsed.links,
    findings: parsed.findings,
    tokens: noteTokens(parsed.note, parsed.chunks),
  };
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
  /** Called after each parsed note with (done, total). */
  onProgress?: (done: number, total: number) => void;
}

/** Parse jobs; results in job order. Reports which path was taken in `threads` (0 = in-thread). */
export async function parseAll(jobs: readonly ParseJob[], options: ParseAllOptions): Promise<{ records: ParsedRecord[]; threads: number }> {
  const file = options.workers === false ? null : workerFile();
  const useWorkers = file !== null && (options.workers === true || jobs.length > WORKER_THRESHOLD);
  if (!useWorkers) {
    const records: ParsedRecord[] = [];
    for (const job of jobs) {
      records.push(parseRecord(job, options.config));
      options.onProgress?.(records.length, jobs.length);
    }
    return { records, threads: 0 };
  }
  const threads = Math.max(1, Math.min(4, availableParallelism()));
  const records = new Array<ParsedRecord>(jobs.length);
  let next = 0;
  let done = 0;
  await Promise.all(Array.from({ length: threads }, () => new Promise<void>((resolve, reject) => {
    const worker = new Worker(file!, { workerData: { config: options.config } });
    let current = -1;
    const feed = () => {
      if (next >= jobs.length) {
        void worker.terminate().then(() => resolve());
        return;
      }
      current = next++;
      worker.postMessage(jobs[current]);
    };
    worker.on('message', (msg: { record?: ParsedRecord; error?: string }) => {
      if (msg.error !== undefined) {
        void worker.terminate();
        reject(new Error(`parse worker failed on ${jobs[current]!.path}: ${msg.error}`));
        return;
      }
      records[current] = msg.record!;
      options.onProgress?.(++done, jobs.length);
      feed();
    });
    worker.on('error', reject);
    feed();
  })));
  return { records, threads };
}
