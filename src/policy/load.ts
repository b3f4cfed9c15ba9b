/**
 * Reading a traversal policy from JSON text: a bare `traversal_policy` object (`--policy`) or a
 * responder packet that carries one at `/lore_access/traversal_policy` (`--packet`). Pure (text in,
 * data out); the CLI does the file I/O.
 */
import { LoretraceError } from '../errors.js';
import type { TraversalPolicy } from '../contracts/types.js';
import { parseStrictJson } from '../contracts/json-input.js';
import type { PolicyPacketContext } from './compile.js';

/**
 * What {@link parsePolicyDocument} returns: the policy, its pointer, the packet when there is one, and
 * the `allowed_scope` a policy file carries next to its policy (null when it carries none).
 */
export interface PolicyDocument {
  policy: TraversalPolicy;
  /** JSON pointer of the policy in the document (``, `/traversal_policy` or `/lore_access/traversal_policy`). */
  pointer: string;
  packet: (PolicyPacketContext & Record<string, unknown>) | null;
  /** `allowed_scope` of a `{ traversal_policy, allowed_scope }` policy file; null otherwise. */
  allowed_scope: string[] | null;
}

/**
 * Parse a policy or packet file's text.
 * @param kind `policy`: a policy file — a bare traversal_policy (a `$schema` key is ignored), or the
 *   `lore_access` shape `{ traversal_policy, allowed_scope? }` that `retrieve --policy` also accepts;
 *   `packet`: a responder packet.
 * @throws LoretraceError from the strict JSON reader (`parseStrictJson`, src/contracts/json-input.ts; all
 *   exit 2, the file could not be read as a document): `bad_json` naming the file, the reason and the line
 *   and column (`p.json is not JSON: unexpected end of input at line 1, column 13`), `duplicate_key` (pointer
 *   and the lines of both occurrences), `json_too_deep`, `proto_key`, `unsafe_integer`; `bad_policy` (exit 1,
 *   the document is not a policy) for a policy file that is not an object or whose `/allowed_scope` is not a
 *   list of non-empty strings, or a packet with no `/lore_access/traversal_policy`.
 */
export function parsePolicyDocument(text: string, file: string, kind: 'policy' | 'packet'): PolicyDocument {
  // The one strict JSON reader every input goes through (BOM ignored; duplicate keys, nesting deeper than
  // 256, __proto__ keys and unsafe integers refused), so `traverse --policy` reads a file as `retrieve --policy` does.
  const doc = parseStrictJson(text, file);
  if (kind === 'policy') return policyFileDocument(doc, file);
  const la = (doc as { lore_access?: { traversal_policy?: unknown } } | null)?.lore_access;
  if (doc === null || typeof doc !== 'object' || !la || typeof la !== 'object' || la.traversal_policy === undefined) {
    throw new LoretraceError('bad_policy', `${file} has no /lore_access/traversal_policy to apply`, { file, pointer: '/lore_access/traversal_policy', expected: 'a responder packet with lore_access.traversal_policy' });
  }
  return { policy: la.traversal_policy as TraversalPolicy, pointer: '/lore_access/traversal_policy', packet: doc as PolicyDocument['packet'], allowed_scope: null };
}

/** A policy file's two forms (see {@link parsePolicyDocument}); the policy itself is checked by compilePolicy. */
function policyFileDocument(doc: unknown, file: string): PolicyDocument {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new LoretraceError('bad_policy', `${file}: a policy file must be a JSON object (a traversal_policy, or { traversal_policy, allowed_scope? })`, { file, pointer: '', expected: 'a JSON object' });
  }
  const obj = doc as Record<string, unknown>;
  if (!('traversal_policy' in obj)) {
    const { $schema: _schema, ...rest } = obj;
    return { policy: rest as unknown as TraversalPolicy, pointer: '', packet: null, allowed_scope: null };
  }
  const scope = obj.allowed_scope;
  if (scope !== undefined && !(Array.isArray(scope) && scope.every((s) => typeof s === 'string' && s.length > 0))) {
    throw new LoretraceError('bad_policy', `${file}: /allowed_scope must be a list of non-empty strings`, { file, pointer: '/allowed_scope', expected: 'a list of refs' });
  }
  return { policy: obj.traversal_policy as TraversalPolicy, pointer: '/traversal_policy', packet: null, allowed_scope: scope === undefined ? null : [...(scope as string[])] };
}
