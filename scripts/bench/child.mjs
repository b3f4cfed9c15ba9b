/**
 * Child-process entry for one benchmark task (started by scripts/bench.mjs with `node --expose-gc`).
 * Protocol over the IPC channel:
 *   parent → { type: 'run', task, params }
 *   child  → { type: 'result', result, max_rss_bytes } | { type: 'error', unavailable, message, max_rss_bytes }
 *   long-lived tasks may also send { type: 'ready', info } and wait for { type: 'stop' } / requests.
 * `max_rss_bytes` is `process.resourceUsage().maxRSS` (kilobytes) × 1024: the peak resident set of
 * this process, worker threads included.
 */
import { TASKS as CORE_TASKS, setPhaseBudget } from './tasks.mjs';
import { EXTENSIONS } from './extensions.mjs';
import { Unavailable } from './loretrace.mjs';

/** Core tasks and those of the bench extensions. */
const TASKS = Object.assign({}, CORE_TASKS, ...EXTENSIONS.map((e) => e.tasks));

const maxRss = () => process.resourceUsage().maxRSS * 1024;

/** Long-lived task hooks get these to talk to the parent. */
const channel = {
  /** @param {unknown} info */
  ready(info) {
    process.send?.({ type: 'ready', info });
  },
  /** Resolves on the parent's { type: 'stop' }. */
  stopped: new Promise((res) => {
    process.on('message', (m) => {
      if (m && m.type === 'stop') res(undefined);
    });
  }),
};

process.once('message', async (msg) => {
  if (!msg || msg.type !== 'run') return;
  const fn = TASKS[msg.task];
  try {
    if (!fn) throw new Error(`unknown bench task ${msg.task}`);
    if (typeof msg.params?.phase_budget_ms === 'number') setPhaseBudget(msg.params.phase_budget_ms);
    const result = await fn(msg.params, channel);
    process.send?.({ type: 'result', result, max_rss_bytes: maxRss() }, () => process.exit(0));
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    process.send?.(
      { type: 'error', unavailable: e instanceof Unavailable, message, max_rss_bytes: maxRss() },
      () => process.exit(0),
    );
  }
});
