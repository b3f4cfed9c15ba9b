/**
 * Reading a traversal policy from JSON text: a bare `traversal_policy` object (`--policy`) or a
 * responder packet that carries one at `/lore_access/traversal_policy` (`--packet`). Pure (text in,
 * data out); the CLI does the file I/O.
 */
import { LoretraceError } from '../errors.js';
import type { TraversalPolicy } from '../packet/types.js';
import type { PolicyPacketContext } from './compile.js';

/** What {@link parsePolicyDocument} returns: the policy, its pointer, and the packet when there is one. */
export interface PolicyDocument {
  policy: TraversalPolicy;
  /** JSON pointer of the policy in the document (`` or `/lore_access/traversal_policy`). */
  pointer: string;
  packet: (PolicyPacketContext & Record<string, unknown>) | null;
}

/**
 * Parse a policy or packet file's text.
 * @param kind `policy`: the document is a bare traversal_policy; `packet`: a responder packet.
 * @throws LoretraceError `bad_policy` (exit 1) when the text is not JSON (message names the file and
 *   the parser's position), or a packet has no `/lore_access/traversal_policy`.
 */
export function parsePolicyDocument(text: string, file: string, kind: 'policy' | 'packet'): PolicyDocument {
  let doc: unknown;
  try {
    doc = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (e) {
    throw new LoretraceError('bad_policy', `${file} is not JSON: ${(e as Error).message}`, { file, pointer: '', expected: `a JSON ${kind === 'policy' ? 'traversal_policy object' : 'responder packet'}` });
  }
  if (kind === 'policy') return { policy: doc as TraversalPolicy, pointer: '', packet: null };
  const la = (doc as { lore_access?: { traversal_policy?: unknown } } | null)?.lore_access;
  if (doc === null || typeof doc !== 'object' || !la || typeof la !== 'object' || la.traversal_policy === undefined) {
    throw new LoretraceError('bad_policy', `${file} has no /lore_access/traversal_policy to apply`, { file, pointer: '/lore_access/traversal_policy', expected: 'a responder packet with lore_access.traversal_policy' });
  }
  return { policy: la.traversal_policy as TraversalPolicy, pointer: '/lore_access/traversal_policy', packet: doc as PolicyDocument['packet'] };
}
