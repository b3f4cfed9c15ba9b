/**
 * The RFC 8785 fast path of the ledger (`plainCanonicalJson` in src/receipts/ledger-record.ts) writes
 * exactly what the `canonicalize` package writes for plain JSON data, and leaves everything else
 * (lone surrogates, NaN, `toJSON` objects, deep nesting) to the package.
 */
import { describe, expect, it } from 'vitest';
import canonicalize from 'canonicalize';
import { canonicalJson, plainCanonicalJson } from '../src/receipts/ledger-record.js';
import { prng } from './helpers/prng.js';

// Keys and strings that stress the sort (code units, not code points) and the escapes.
const PIECES = ['a', 'B', 'é', 'e\u0301', '\u2028', '"', '\\', '\n', '\u0000', '\u001f', '😀', '\uFB01', 'z', '10', '2', '', ' ', '\uFFFF', '</script>'];
const NUMBERS = [0, -0, 1, -1, 0.1, 1e21, 1e-7, 123456789.125, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, 5e-324, -1.5e300, 333333333.3333333];

function randomString(rand: () => number): string {
  let s = '';
  const n = Math.floor(rand() * 5);
  for (let i = 0; i < n; i++) s += PIECES[Math.floor(rand() * PIECES.length)];
  return s;
}

function randomValue(rand: () => number, depth: number): unknown {
  const r = rand();
  if (depth > 4 || r < 0.3) {
    const p = rand();
    if (p < 0.35) return randomString(rand);
    if (p < 0.7) return NUMBERS[Math.floor(rand() * NUMBERS.length)];
    if (p < 0.8) return rand() < 0.5;
    if (p < 0.9) return null;
    return rand() < 0.5 ? undefined : Math.floor(rand() * 1e6) / 7;
  }
  if (r < 0.6) return Array.from({ length: Math.floor(rand() * 5) }, () => randomValue(rand, depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(rand() * 6); i > 0; i--) o[randomString(rand)] = randomValue(rand, depth + 1);
  return o;
}

describe('plainCanonicalJson', () => {
  it('writes what the canonicalize package writes, for 5,000 random plain values', () => {
    const rand = prng(85);
    for (let i = 0; i < 5000; i++) {
      const v = randomValue(rand, 0);
      if (v === undefined) continue;
      expect(plainCanonicalJson(v)).toBe(canonicalize(v));
    }
  });

  it('writes what the package writes for a ledger-shaped record', () => {
    const record = {
      schema_version: 'loretrace.ledger.v2', ledger_id: 'lt-0123456789abcdef', seq: 3, record_id: 'lt-0123456789abcdef:3',
      kind: 'TOOL_RESULT', occurred_on: '2026-12-01T15:00:00.000Z', actor: { kind: 'agent', id: 'mara-voss' }, canonical_form: 'RFC8785',
      tool: 'lore_read', transport: 'mcp', arguments: { ref: 'AetheriaLore:Bloom.md#chunk2', line_start: 4 },
      outcome: { status: 'ok', snapshot_id: 'snap-1', served: [{ ref: 'AetheriaLore:Bloom.md#chunk2', path: 'Bloom.md', chunk_index: 2, line_start: 4, line_end: 9, file_sha256: 'ab'.repeat(32), text_sha256: 'cd'.repeat(32), via: 'scope', depth: 0 }], chars_returned: 812 },
      payload_hash: 'ef'.repeat(32),
    };
    expect(plainCanonicalJson(record)).toBe(canonicalize(record));
    expect(canonicalJson(record)).toBe(canonicalize(record));
  });

  it('leaves lone surrogates, NaN, toJSON objects, symbols and deep nesting to the package', () => {
    expect(plainCanonicalJson('\uD800')).toBeUndefined();
    expect(plainCanonicalJson({ ['\uDC00x']: 1 })).toBeUndefined();
    expect(plainCanonicalJson([Number.NaN])).toBeUndefined();
    expect(plainCanonicalJson({ when: new Date(0) })).toBeUndefined();
    expect(plainCanonicalJson(Symbol('s'))).toBeUndefined();
    let deep: unknown = 1;
    for (let i = 0; i < 70; i++) deep = [deep];
    expect(plainCanonicalJson(deep)).toBeUndefined();
    // What canonicalJson then returns is the package's text (lone surrogates made U+FFFD first).
    expect(canonicalJson({ when: new Date(0) })).toBe(canonicalize({ when: new Date(0) }));
    expect(canonicalJson(deep)).toBe(canonicalize(deep));
    expect(canonicalJson({ s: 'a\uD800b' })).toBe('{"s":"a\uFFFDb"}');
  });
});
