/**
 * Worker-thread entry of the parse pool (src/indexer/parse-pool.ts): receives {@link BatchMessage}s,
 * answers `{ id, batch }` (packed postings transferred, not copied) or `{ id, error }`. Only used from
 * the compiled `dist/indexer/parse-worker.js`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { VaultConfig } from '../types.js';
import { jobsOf, parseWire, transferList, type BatchMessage } from './parse-pool.js';

const config = (workerData as { config: VaultConfig }).config;

parentPort?.on('message', (msg: BatchMessage) => {
  try {
    const batch = parseWire(jobsOf(msg), config);
    parentPort!.postMessage({ id: msg.id, batch }, transferList(batch));
  } catch (e) {
    parentPort!.postMessage({ id: msg.id, error: e instanceof Error ? e.message : String(e) });
  }
});
