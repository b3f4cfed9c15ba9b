/**
 * The one type guard for a JSON object: every reader of a parsed document (packet, policy, capture,
 * fragment, ledger record, receipt, MCP frame) tells an object from an array and from `null` the same way.
 */

/**
 * True when `value` is a JSON object as `JSON.parse` gives it — `typeof` `"object"`, not `null`, not an
 * array (RFC 8259 §4: an object is a set of name/value pairs; an array is not one) — and narrows it to
 * `Record<string, unknown>`. Never throws.
 */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
