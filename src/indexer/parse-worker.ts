/**
 * Worker-thread entry of the parse pool (src/indexer/parse-pool.ts): receives a {@link ConfigMessage} at
 * the start of each run (a pooled worker serves several runs), then {@link BatchMessage}s, and answers
 * `{ id, batch }` (buffers transferred, not copied) or `{ id, error }`. In streaming mode
 * (`msg.recycle`) the answer's buffers come from a small pool that the main thread refills with the
 * buffers of consumed batches ({@link RecycleMessage}), and the input buffer goes back as `input`, so a
 * cold build's buffers circulate between the threads instead of becoming garbage. Only used from the
 * compiled `dist/indexer/parse-worker.js`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { VaultConfig } from '../types.js';
import { BufferPool, jobsOf, parseWire, transferList, type BatchMessage, type ConfigMessage, type RecycleMessage } from './parse-pool.js';

let config = (workerData as { config: VaultConfig }).config;
const pool = new BufferPool();
const take = (n: number) => pool.take(n);

parentPort?.on('message', (msg: BatchMessage | RecycleMessage | ConfigMessage) => {
  if ('recycle' in msg && Array.isArray(msg.recycle)) {
    for (const b of msg.recycle) pool.give(b);
    return;
  }
  if ('config' in msg) {
    config = msg.config;
    return;
  }
  const m = msg as BatchMessage;
  try {
    const batch = parseWire(jobsOf(m), config, m.recycle ? take : undefined);
    const transfer = transferList(batch);
    if (m.recycle) {
      transfer.push(m.buffer);
      parentPort!.postMessage({ id: m.id, batch, input: m.buffer }, transfer);
    } else parentPort!.postMessage({ id: m.id, batch }, transfer);
  } catch (e) {
    parentPort!.postMessage({ id: m.id, error: e instanceof Error ? e.message : String(e) });
  }
});
