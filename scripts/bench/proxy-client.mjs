/**
 * HTTP client side of the proxy phases, run in the orchestrator while the proxy server runs in its own
 * child (so the server's peak RSS is its own). One session; `calls` `lore_search` calls (cycling the
 * query set) then `calls` `lore_read` calls (cycling the sampled line ranges the session admits — the
 * same ranges the proxy floor then reads), per run.
 * Per-call latency is request start → full response body parsed.
 */
import { percentile } from './stats.mjs';

const now = () => performance.now();

/**
 * @param {{ url: string, session?: string, headers?: Record<string, string>, searchPath: string, readPath: string }} info
 *   what the proxy child reported when ready
 * @param {{ namespace: string, queries: string[], reads: { path: string, ref_path: string, line_start: number, line_end: number }[], calls: number, runs: number, budgetMs: number }} o
 * @returns {Promise<Record<string, any>>} raw figures of `proxy_lore_search` and `proxy_lore_read` (or `{ error }`
 *   each), plus `admitted_reads`: the ranges the session admitted
 */
export async function runProxyClient(info, o) {
  const headers = { 'content-type': 'application/json', ...(info.headers ?? {}) };
  const call = async (path, body, allowRefusal = false) => {
    const res = await fetch(new URL(path, info.url), { method: 'POST', headers, body: JSON.stringify(body) });
    const text = await res.text();
    if (!res.ok) {
      if (allowRefusal) return null;
      throw new Error(`HTTP ${res.status} from ${path}: ${text.slice(0, 300)}`);
    }
    return JSON.parse(text);
  };
  const readBody = (rd) => ({ ref: `${o.namespace}:${rd.ref_path}#L${rd.line_start}-L${rd.line_end}` });
  const measure = async (makeBody, path) => {
    const p50 = [], p99 = [], rates = [];
    const start = now();
    for (let r = 0; r < o.runs; r++) {
      if (r > 0 && now() - start >= o.budgetMs) break;
      const samples = [];
      const t0 = now();
      for (let i = 0; i < o.calls; i++) {
        const c0 = now();
        await call(path, makeBody(i));
        samples.push(now() - c0);
      }
      rates.push((o.calls * 1000) / (now() - t0));
      p50.push(percentile(samples, 50));
      p99.push(percentile(samples, 99));
    }
    return { p50_ms: p50, p99_ms: p99, calls_per_s: rates, extra: { calls: o.calls, transport: 'http', session: 'one' } };
  };
  const out = {};
  try {
    out.proxy_lore_search = await measure((i) => ({ query: o.queries[i % o.queries.length], k: 5 }), info.searchPath);
  } catch (e) {
    out.proxy_lore_search = { error: e instanceof Error ? e.message : String(e) };
  }
  try {
    // One untimed pass keeps the ranges the session admits (a sampled note may be hidden, e.g. author-only
    // frontmatter); the proxy floor then reads exactly these ranges.
    const admitted = [];
    for (const rd of o.reads) if ((await call(info.readPath, readBody(rd), true)) !== null) admitted.push(rd);
    if (admitted.length === 0) throw new Error(`the session admitted none of the ${o.reads.length} sampled line ranges`);
    out.admitted_reads = admitted;
    out.proxy_lore_read = await measure((i) => readBody(admitted[i % admitted.length]), info.readPath);
    out.proxy_lore_read.extra.ranges = admitted.length;
    out.proxy_lore_read.extra.ranges_refused_in_warmup = o.reads.length - admitted.length;
  } catch (e) {
    out.proxy_lore_read = { error: e instanceof Error ? e.message : String(e) };
  }
  return out;
}
