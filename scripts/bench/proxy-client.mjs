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
 * The HTTP caller every HTTP phase uses (loretrace's proxy and the bare floor alike): `fetch` POST of a
 * JSON body, the whole response body read as text.
 * @param {{ url: string, headers?: Record<string, string> }} info
 * @returns {(path: string, body: string, allowRefusal?: boolean) => Promise<string | null>} the response
 *   text; null for a refused call when `allowRefusal`
 */
export function httpCaller(info) {
  const headers = { 'content-type': 'application/json', ...(info.headers ?? {}) };
  return async (path, body, allowRefusal = false) => {
    const res = await fetch(new URL(path, info.url), { method: 'POST', headers, body });
    const text = await res.text();
    if (!res.ok) {
      if (allowRefusal) return null;
      throw new Error(`HTTP ${res.status} from ${path}: ${text.slice(0, 300)}`);
    }
    return text;
  };
}

/**
 * Per run, `calls` timed calls of `path` with `makeBody(i)`; p50/p99 per run, calls/s.
 * @param {(path: string, body: string) => Promise<unknown>} call
 * @param {string} path
 * @param {(i: number) => string} makeBody
 * @param {{ calls: number, runs: number, budgetMs: number }} o
 */
export async function measureHttp(call, path, makeBody, o) {
  const p50 = [], p99 = [], rates = [];
  const start = now();
  for (let r = 0; r < o.runs; r++) {
    if (r > 0 && now() - start >= o.budgetMs) break;
    const samples = [];
    const t0 = now();
    for (let i = 0; i < o.calls; i++) {
      const body = makeBody(i);
      const c0 = now();
      JSON.parse(/** @type {string} */ (await call(path, body)));
      samples.push(now() - c0);
    }
    rates.push((o.calls * 1000) / (now() - t0));
    p50.push(percentile(samples, 50));
    p99.push(percentile(samples, 99));
  }
  return { p50_ms: p50, p99_ms: p99, calls_per_s: rates, extra: { calls: o.calls, transport: 'http', session: 'one' } };
}

/**
 * @param {{ url: string, session?: string, headers?: Record<string, string>, searchPath: string, readPath: string }} info
 *   what the proxy child reported when ready
 * @param {{ namespace: string, queries: string[], reads: { path: string, ref_path: string, line_start: number, line_end: number }[], calls: number, runs: number, budgetMs: number }} o
 * @returns {Promise<Record<string, any>>} raw figures of `proxy_lore_search` and `proxy_lore_read` (or `{ error }`
 *   each), plus `admitted_reads`: the ranges the session admitted, and `read_responses`: for each, the
 *   request body and the response text loretrace sent (the bare HTTP floor serves exactly these bytes)
 */
export async function runProxyClient(info, o) {
  const call = httpCaller(info);
  const readBody = (rd) => JSON.stringify({ ref: `${o.namespace}:${rd.ref_path}#L${rd.line_start}-L${rd.line_end}` });
  const out = {};
  try {
    out.proxy_lore_search = await measureHttp(call, info.searchPath, (i) => JSON.stringify({ query: o.queries[i % o.queries.length], k: 5 }), o);
  } catch (e) {
    out.proxy_lore_search = { error: e instanceof Error ? e.message : String(e) };
  }
  try {
    // One untimed pass keeps the ranges the session admits (a sampled note may be hidden, e.g. author-only
    // frontmatter); the proxy floor then reads exactly these ranges.
    const admitted = [];
    const responses = [];
    for (const rd of o.reads) {
      const request = readBody(rd);
      const response = await call(info.readPath, request, true);
      if (response === null) continue;
      admitted.push(rd);
      responses.push({ request, response });
    }
    if (admitted.length === 0) throw new Error(`the session admitted none of the ${o.reads.length} sampled line ranges`);
    out.admitted_reads = admitted;
    out.read_responses = responses;
    out.proxy_lore_read = await measureHttp(call, info.readPath, (i) => readBody(admitted[i % admitted.length]), o);
    out.proxy_lore_read.extra.ranges = admitted.length;
    out.proxy_lore_read.extra.ranges_refused_in_warmup = o.reads.length - admitted.length;
    out.proxy_lore_read.extra.mean_response_bytes = responses.reduce((n, r) => n + Buffer.byteLength(r.response), 0) / responses.length;
  } catch (e) {
    out.proxy_lore_read = { error: e instanceof Error ? e.message : String(e) };
  }
  return out;
}

/**
 * Client side of the bare HTTP floor: the same caller and timing as `lore_read`, the same request bodies
 * in the same order, against the `node:http` server that answers each with loretrace's recorded bytes.
 * @param {{ url: string, readPath: string }} info
 * @param {{ responses: { request: string, response: string }[], calls: number, runs: number, budgetMs: number }} o
 */
export async function runHttpFloorClient(info, o) {
  const call = httpCaller(info);
  const m = await measureHttp(call, info.readPath, (i) => o.responses[i % o.responses.length].request, o);
  m.extra.bodies = o.responses.length;
  return m;
}
