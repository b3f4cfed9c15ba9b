/**
 * Worker-thread entry of the parse pool (src/indexer/parse-pool.ts): receives {@link ParseJob}s, answers
 * `{ record }` or `{ error }`. Only used from the compiled `dist/indexer/parse-worker.js`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { VaultConfig } from '../types.js';
import { parseRecord, type ParseJob } from './parse-pool.js';

const config = (workerData as { config: VaultConfig }).config;

parentPort?.on('message', (job: ParseJob) => {
  try {
    parentPort!.postMessage({ record: parseRecord(job, config) });
  } catch (e) {
    parentPort!.postMessage({ error: e instanceof Error ? e.message : String(e) });
  }
});
