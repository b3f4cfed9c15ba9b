/**
 * The one MCP client of the stdio phases: the official SDK's `Client` over its `StdioClientTransport`,
 * the way an MCP host starts a local server. loretrace's `serve --mcp` and the MCP filesystem server are
 * both measured through this function — same client code, same transport, same framing — so their
 * per-call latencies compare. Per-call latency is `callTool` start → result parsed by the SDK.
 * The server's peak RSS is its `VmHWM` (/proc/<pid>/status, Linux; null elsewhere), read before closing.
 */
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { percentile } from './stats.mjs';

const now = () => performance.now();

/**
 * Peak resident set of process `pid` in bytes (`VmHWM`), or null when /proc is not there.
 * @param {number | null} pid
 * @returns {number | null}
 */
export function peakRssOf(pid) {
  if (pid == null) return null;
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Characters of text content in a tool result. @param {any} result */
function textChars(result) {
  return (result?.content ?? []).reduce((n, c) => n + (c.type === 'text' ? c.text.length : 0), 0);
}

/**
 * How long the server may take to answer `initialize` (ms). The SDK's default of 60 s is too short for
 * `loretrace serve --mcp` to load a ×100 index on a loaded machine (it failed so at load 18–22); the
 * phase's own `--timeout` still bounds the whole child.
 */
export const MCP_START_TIMEOUT_MS = 900_000;

/**
 * Start `server` over stdio, call `tool` with each of `items` once untimed (those the server refuses,
 * `isError`, are dropped when `dropRefused`), then per run `calls` timed calls cycling the kept items.
 * @param {{ command: string, args: string[], cwd?: string, env?: Record<string, string> }} server
 * @param {{ tool: string, items: Record<string, unknown>[], dropRefused: boolean, calls: number, runs: number, budgetMs: number }} o
 * @returns {Promise<{ p50_ms: number[], p99_ms: number[], calls_per_s: number[], peak_rss_bytes: number | null, kept: number[], extra: Record<string, unknown> }>}
 *   `kept`: indices into `items` of the calls the server answered in the untimed pass
 * @throws {Error} when the server does not start, or refuses a timed call or every item
 */
export async function runMcpStdio(server, o) {
  const transport = new StdioClientTransport({ command: server.command, args: server.args, cwd: server.cwd, env: server.env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => {
    stderr = (stderr + d.toString()).slice(-2000);
  });
  const client = new Client({ name: 'loretrace-bench', version: '1' });
  const t0 = now();
  try {
    await client.connect(transport, { timeout: MCP_START_TIMEOUT_MS });
  } catch (e) {
    throw new Error(`${server.args.join(' ').slice(0, 120)} did not start: ${e instanceof Error ? e.message : String(e)}${stderr ? ` / ${stderr.trim().split('\n').at(-1)}` : ''}`);
  }
  const connectMs = now() - t0;
  try {
    const kept = [];
    let chars = 0;
    for (let i = 0; i < o.items.length; i++) {
      const r = await client.callTool({ name: o.tool, arguments: o.items[i] });
      if (r.isError) {
        if (!o.dropRefused) throw new Error(`${o.tool} refused ${JSON.stringify(o.items[i])}: ${JSON.stringify(r.content).slice(0, 300)}`);
        continue;
      }
      kept.push(i);
      chars += textChars(r);
    }
    if (kept.length === 0) throw new Error(`${o.tool} answered none of the ${o.items.length} warm-up calls`);
    const p50 = [], p99 = [], rates = [];
    const start = now();
    for (let r = 0; r < o.runs; r++) {
      if (r > 0 && now() - start >= o.budgetMs) break;
      const samples = [];
      const r0 = now();
      for (let i = 0; i < o.calls; i++) {
        const args = o.items[kept[i % kept.length]];
        const c0 = now();
        const res = await client.callTool({ name: o.tool, arguments: args });
        samples.push(now() - c0);
        if (res.isError) throw new Error(`${o.tool} refused timed call ${JSON.stringify(args)}: ${JSON.stringify(res.content).slice(0, 300)}`);
      }
      rates.push((o.calls * 1000) / (now() - r0));
      p50.push(percentile(samples, 50));
      p99.push(percentile(samples, 99));
    }
    const peak = peakRssOf(transport.pid);
    return {
      p50_ms: p50, p99_ms: p99, calls_per_s: rates, peak_rss_bytes: peak, kept,
      extra: { calls: o.calls, transport: 'stdio', tool: o.tool, connect_ms: connectMs, items: kept.length, refused_in_warmup: o.items.length - kept.length, mean_chars_returned: chars / kept.length },
    };
  } finally {
    await client.close();
  }
}
