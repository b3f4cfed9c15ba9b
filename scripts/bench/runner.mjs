/**
 * Runs one task in a fresh `node --expose-gc` child (scripts/bench/child.mjs) and collects its result
 * and peak RSS. A child that dies (out of memory, killed by the timeout, crashed) yields a `failed`
 * outcome with the reason and the tail of its stderr — never a crash of the harness.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'child.mjs');

/**
 * @typedef {{ status: 'ok', result: any, max_rss_bytes: number }
 *   | { status: 'unavailable' | 'failed', reason: string, max_rss_bytes: number | null }} ChildOutcome
 */

/**
 * @param {string} task task name (scripts/bench/tasks.mjs TASKS)
 * @param {Record<string, unknown>} params plain JSON
 * @param {{ timeoutMs: number, execArgv?: string[], onReady?: (info: any, send: (m: any) => void) => Promise<void>, env?: NodeJS.ProcessEnv }} options
 *   `onReady` is called for long-lived tasks when the child reports ready; the child is told to stop
 *   when it resolves.
 * @returns {Promise<ChildOutcome>}
 */
export function runChild(task, params, options) {
  return new Promise((resolve) => {
    const child = fork(CHILD, [], {
      execArgv: ['--expose-gc', ...(options.execArgv ?? [])],
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      env: options.env ?? process.env,
    });
    let stderr = '';
    const keep = (d) => {
      stderr = (stderr + d.toString()).slice(-4000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let settled = false;
    const finish = (outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const timer = setTimeout(() => {
      finish({ status: 'failed', reason: `timed out after ${Math.round(options.timeoutMs / 1000)} s`, max_rss_bytes: null });
      child.kill('SIGKILL');
    }, options.timeoutMs);
    child.on('message', async (m) => {
      if (!m || typeof m !== 'object') return;
      if (m.type === 'ready') {
        try {
          await options.onReady?.(m.info, (msg) => child.send(msg));
        } catch (e) {
          stderr += `\nclient side: ${e instanceof Error ? e.message : String(e)}`;
        }
        child.send({ type: 'stop' });
      } else if (m.type === 'result') {
        finish({ status: 'ok', result: m.result, max_rss_bytes: m.max_rss_bytes });
      } else if (m.type === 'error') {
        finish({ status: m.unavailable ? 'unavailable' : 'failed', reason: m.message, max_rss_bytes: m.max_rss_bytes });
      }
    });
    child.on('exit', (code, signal) => setTimeout(() => {
      const lines = stderr.trim().split('\n');
      const fatal = lines.find((l) => /FATAL ERROR|JavaScript heap out of memory|^\w*Error\b/.test(l));
      const tail = (fatal ? [fatal.trim()] : lines.slice(-3)).join(' / ');
      finish({
        status: 'failed',
        reason: `child exited (${signal ?? `code ${code}`}) before reporting${tail ? `: ${tail}` : ''}`,
        max_rss_bytes: null,
      });
    }, 100));
    child.send({ type: 'run', task, params });
  });
}
