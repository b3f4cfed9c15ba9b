/**
 * Server limits and session budgets of the research proxy (docs/PROXY.md), plus the request-rate limiter.
 *
 * Two sources of limits are merged into one {@link SessionBudgets} at session start:
 * - **server limits** ({@link ServerLimits}): operator settings with the defaults in {@link DEFAULT_LIMITS}
 *   (`loretrace serve --limit name=value` overrides them);
 * - **policy budgets**: numeric budgets the policy compiler derived from the packet's
 *   `traversal_policy.stop_conditions` (`CompiledPolicy.budgets`). When both set a budget, the
 *   smaller one wins.
 *
 * Every limit is documented in docs/PROXY.md ("Budgets"). Sizes are in characters (UTF-16 code units)
 * unless a name ends in `_bytes`.
 */
import { LoretraceError } from '../errors.js';

/** Operator limits of one proxy session. All counts are per session unless the name says per call. */
export interface ServerLimits {
  /** Tool calls per session, refused or not (`budget_exhausted` after that). */
  max_calls: number;
  /** Search hits per `lore_search` call (the largest `k` accepted; larger `k` is clamped). */
  max_k: number;
  /** `k` used when a `lore_search` call gives none. */
  default_k: number;
  /** Search hits returned over the whole session. */
  max_results: number;
  /** Characters of lore text returned by `lore_read` over the whole session. */
  max_chars_returned: number;
  /** Characters of lore text one `lore_read` may return (`bad_request` above it: ask for fewer lines). */
  max_chars_per_read: number;
  /** Characters of a `lore_search` query. */
  max_query_chars: number;
  /** Characters of a ref, `target` or `from_ref` argument. */
  max_ref_chars: number;
  /** Request-rate limiter: bucket size (calls that may arrive at once). */
  rate_burst: number;
  /** Request-rate limiter: calls per second refilled into the bucket. */
  rate_per_second: number;
  /** HTTP: bytes of a request body (`413` above it). */
  max_body_bytes: number;
  /** HTTP: characters of the request target (path + query string) (`414` above it). */
  max_url_chars: number;
  /** Ledger: a string argument longer than this many characters is recorded as `{ $omitted, chars, sha256 }`. */
  ledger_max_arg_chars: number;
}

/** Default server limits (see docs/PROXY.md). */
export const DEFAULT_LIMITS: Readonly<ServerLimits> = Object.freeze({
  max_calls: 2000,
  max_k: 20,
  default_k: 8,
  max_results: 1000,
  max_chars_returned: 1_000_000,
  max_chars_per_read: 60_000,
  max_query_chars: 512,
  max_ref_chars: 1024,
  rate_burst: 120,
  rate_per_second: 60,
  max_body_bytes: 16_384,
  max_url_chars: 2048,
  ledger_max_arg_chars: 2048,
});

/** The names `--limit name=value` accepts, in {@link DEFAULT_LIMITS} order (`serve --help` lists them). */
export const LIMIT_NAMES: readonly (keyof ServerLimits)[] = Object.freeze(Object.keys(DEFAULT_LIMITS) as (keyof ServerLimits)[]);

/**
 * The budgets a compiled policy carries (`Budgets`, src/policy/types.ts), as the proxy reads
 * them: `null` = no limit. Mapping onto a research session (docs/PROXY.md "Budgets"):
 * - `max_refs`   → distinct notes whose text was returned (seeds included);
 * - `max_chunks` → `lore_read` calls that returned text;
 * - `max_chars`  → characters of lore text returned (together with the server's `max_chars_returned`);
 * - `time_budget_ms` → wall-clock milliseconds from session start (calls after it: `budget_exhausted`);
 * - `min_relevance` is a traversal-only budget (ranking of links the walk follows); the proxy records it
 *   in the receipt but the responder chooses what to follow.
 */
export interface PolicyBudgets {
  max_refs?: number | null;
  max_chunks?: number | null;
  max_chars?: number | null;
  min_relevance?: number | null;
  time_budget_ms?: number | null;
}

/** The effective budgets of one session: server limits merged with the policy budgets (smaller wins). */
export interface SessionBudgets {
  /** Tool calls, refused or not. */
  max_calls: number;
  /** Search hits returned. */
  max_results: number;
  /** Characters of lore text returned. */
  max_chars_returned: number;
  /** Distinct notes whose text was returned; null = no limit. */
  max_notes: number | null;
  /** `lore_read` calls that returned text; null = no limit. */
  max_reads: number | null;
  /** Milliseconds from session start; null = no limit. */
  time_budget_ms: number | null;
}

/**
 * Parse `name=value` overrides (`--limit max_calls=50`) onto {@link DEFAULT_LIMITS}.
 * @throws LoretraceError `usage` (exit 2) for an unknown name or a value that is not an integer ≥ 1.
 */
export function parseLimitOverrides(pairs: readonly string[], base: Readonly<ServerLimits> = DEFAULT_LIMITS): ServerLimits {
  const out: ServerLimits = { ...base };
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    const raw = eq < 0 ? '' : pair.slice(eq + 1);
    if (!Object.prototype.hasOwnProperty.call(DEFAULT_LIMITS, name)) {
      throw new LoretraceError('usage', `unknown limit "${name}" in --limit ${pair}; the limits are ${LIMIT_NAMES.join(', ')}`, {
        expected: `one of ${LIMIT_NAMES.join(', ')}`,
      }, 2);
    }
    const value = Number(raw);
    if (!/^[0-9]+$/.test(raw) || !Number.isSafeInteger(value) || value < 1) {
      throw new LoretraceError('usage', `--limit ${pair}: the value must be an integer ≥ 1 (got "${raw}")`, { expected: 'integer ≥ 1' }, 2);
    }
    (out as unknown as Record<string, number>)[name] = value;
  }
  if (out.default_k > out.max_k) out.default_k = out.max_k;
  return out;
}

/**
 * The complete limits of a session from what a caller of `openProxySession` / `new ProxySession` gave:
 * every key left out (or `undefined`) takes its {@link DEFAULT_LIMITS} value, so `{ max_calls: 50 }` is the
 * defaults with 50 calls. What is given must be a known limit with a safe integer value ≥ 1, the rule
 * `--limit name=value` applies ({@link parseLimitOverrides}); `null` or no object at all means the defaults.
 * @throws LoretraceError `bad_option` naming the key and what was expected: `limits` is not an object, a key
 *   is no limit (`details.data.limit`, `expected` lists the names), or a value is not an integer ≥ 1.
 */
export function resolveLimits(given: Readonly<Partial<ServerLimits>> | null | undefined): ServerLimits {
  if (given === null || given === undefined) return { ...DEFAULT_LIMITS };
  if (typeof given !== 'object' || Array.isArray(given)) {
    throw new LoretraceError('bad_option', `proxy limits must be an object of limit names and integers (got ${Array.isArray(given) ? 'an array' : typeof given})`, {
      expected: `an object with keys among ${LIMIT_NAMES.join(', ')}`,
    }, 2);
  }
  const out: ServerLimits = { ...DEFAULT_LIMITS };
  for (const [name, value] of Object.entries(given) as [string, unknown][]) {
    if (!Object.prototype.hasOwnProperty.call(DEFAULT_LIMITS, name)) {
      throw new LoretraceError('bad_option', `unknown proxy limit ${JSON.stringify(name.slice(0, 64))}; the limits are ${LIMIT_NAMES.join(', ')}`, {
        expected: `one of ${LIMIT_NAMES.join(', ')}`, data: { limit: name.slice(0, 64) },
      }, 2);
    }
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      const got = typeof value === 'number' || typeof value === 'boolean' ? String(value) : value === null ? 'null' : typeof value === 'string' ? JSON.stringify(value.slice(0, 32)) : typeof value;
      throw new LoretraceError('bad_option', `proxy limit ${name} must be an integer ≥ 1 (got ${got})`, { expected: 'integer ≥ 1', data: { limit: name } }, 2);
    }
    (out as unknown as Record<string, number>)[name] = value;
  }
  return out;
}

/** A budget value of a policy: a non-negative safe integer, else undefined (= no limit). */
function budgetField(budgets: PolicyBudgets | undefined, name: keyof PolicyBudgets): number | undefined {
  const v = budgets?.[name];
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}

/** Merge server limits and policy budgets: for each budget the smaller value wins. */
export function mergeBudgets(limits: Readonly<ServerLimits>, policy: PolicyBudgets | undefined): SessionBudgets {
  const chars = budgetField(policy, 'max_chars');
  return {
    max_calls: limits.max_calls,
    max_results: limits.max_results,
    max_chars_returned: chars === undefined ? limits.max_chars_returned : Math.min(limits.max_chars_returned, chars),
    max_notes: budgetField(policy, 'max_refs') ?? null,
    max_reads: budgetField(policy, 'max_chunks') ?? null,
    time_budget_ms: budgetField(policy, 'time_budget_ms') ?? null,
  };
}

/**
 * Token-bucket request-rate limiter: `burst` calls may arrive at once, then `perSecond` calls per second.
 * Time comes from `now()` in milliseconds (monotonic; injectable for tests).
 */
export class RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    private readonly burst: number,
    private readonly perSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.last = now();
  }

  /** Take one token; false when the bucket is empty (the caller refuses with `rate_limited`). */
  take(): boolean {
    const t = this.now();
    const elapsed = Math.max(0, t - this.last);
    this.last = t;
    this.tokens = Math.min(this.burst, this.tokens + (elapsed / 1000) * this.perSecond);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }
}

/**
 * How deeply tool arguments may nest: `{ "ref": "…" }` is depth 1, `{ "ref": [[1]] }` depth 3. No tool
 * argument nests at all, so 8 leaves room for clients that wrap values; deeper arguments are refused
 * (`bad_request`, reason `arguments_too_deep`) before anything else reads them, because validators,
 * digests and canonical JSON all walk values recursively and a 16 KB body can nest 8,000 levels deep
 * (docs/PROXY.md "Enforcement").
 */
export const MAX_ARGUMENT_DEPTH = 8;

/**
 * Whether `value` nests objects/arrays deeper than `limit` levels (a scalar is depth 0, `{}` and `[]`
 * depth 1). Walks with an explicit stack, never recursion, and stops at the first path over the limit, so
 * it is safe on attacker-controlled depth.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v as object)) stack.push([child, depth + 1]);
  }
  return false;
}
