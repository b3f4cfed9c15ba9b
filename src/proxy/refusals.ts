/**
 * The proxy's refusal taxonomy (docs/PROXY.md). A refusal is a normal tool result, not a protocol failure:
 * MCP returns it with `isError: true`, HTTP with a 4xx status and `{ "error": { "code", "message" } }`.
 *
 * The client sees {@link RefusalCode}; the ledger records the code *and* the true reason. A hidden ref and
 * a ref that does not exist both show `not_found` with the same message shape, so refusals cannot be used
 * to probe for hidden lore.
 */

/** Codes a client can see. */
export type RefusalCode =
  | 'bad_ref'
  | 'bad_request'
  | 'not_found'
  | 'out_of_scope'
  | 'not_reached'
  | 'depth_exceeded'
  | 'class_not_allowed'
  | 'budget_exhausted'
  | 'rate_limited';

/** Every refusal code, in documentation order. */
export const REFUSAL_CODES: readonly RefusalCode[] = [
  'bad_ref', 'bad_request', 'not_found', 'out_of_scope', 'not_reached', 'depth_exceeded', 'class_not_allowed',
  'budget_exhausted', 'rate_limited',
];

/** HTTP status of each refusal code. */
export const REFUSAL_HTTP_STATUS: Readonly<Record<RefusalCode, number>> = {
  bad_ref: 400,
  bad_request: 400,
  not_found: 404,
  out_of_scope: 403,
  not_reached: 403,
  depth_exceeded: 403,
  class_not_allowed: 403,
  budget_exhausted: 429,
  rate_limited: 429,
};

/** A refusal as the client sees it. */
export interface Refusal {
  code: RefusalCode;
  message: string;
}

/**
 * Map a reason from the policy's one enforcement path (`checkPath` / `checkEdge`, src/policy) or from the
 * checked reader (src/proxy/safe-read.ts) to the client-facing code. Hidden refs, unresolved links and
 * every file-integrity failure map to `not_found`; `prefix_denied` and `future_era` map to `out_of_scope`;
 * `not_expanded` (a `no_expand_class:` note's links) maps to `class_not_allowed`; unknown reasons map to
 * `out_of_scope` (deny by default).
 */
export function refusalCodeFor(reason: string): RefusalCode {
  switch (reason) {
    case 'depth_exceeded':
      return 'depth_exceeded';
    case 'class_not_allowed':
    case 'not_expanded':
      return 'class_not_allowed';
    case 'budget_exhausted':
      return 'budget_exhausted';
    case 'hidden_ref':
    case 'unresolved':
    case 'not_found':
    case 'outside_root':
    case 'not_regular_file':
    case 'symlink':
    case 'hard_link':
    case 'stale_file':
      return 'not_found';
    case 'not_reached':
      return 'not_reached';
    case 'bad_ref':
      return 'bad_ref';
    default:
      return 'out_of_scope';
  }
}
