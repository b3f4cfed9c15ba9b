// Hostile JSON for the validators (breaker regressions): deep nesting once overflowed the stack in
// jsonSyntaxError, preview (JSON.stringify) and firstDifference (isDeepStrictEqual).
import { describe, expect, it } from 'vitest';
import { firstDifference, jsonDuplicateKey, jsonSyntaxError, preview } from '../src/contracts/rules.js';
import { parseJsonDocument, validateCapture, validatePacket } from '../src/contracts/validate.js';
import { isLoretraceError } from '../src/errors.js';

const DEEP = 100_000;
const deepArray = (): unknown => JSON.parse('['.repeat(DEEP) + ']'.repeat(DEEP));

describe('jsonSyntaxError', () => {
  it('reports 200 000 unclosed brackets at the end of input instead of overflowing the stack', () => {
    expect(jsonSyntaxError('['.repeat(200_000))).toEqual({ offset: 200_000, reason: 'unexpected end of input' });
    expect(jsonSyntaxError('{"a":'.repeat(50_000) + '1' + '}'.repeat(49_999) + ']')).toEqual({ offset: 300_000, reason: `expected ',' or '}', found "]"` });
  });

  it('accepts deep valid JSON', () => {
    expect(jsonSyntaxError('['.repeat(DEEP) + ']'.repeat(DEEP))).toBeNull();
  });
});

describe('preview', () => {
  it('previews a 100 000-deep array and a 5 MB string in bounded output', () => {
    expect(preview(deepArray())).toBe('['.repeat(59) + '…');
    expect(preview('x'.repeat(5_000_000))).toBe('"' + 'x'.repeat(58) + '…');
  });

  it('is JSON.stringify for small values', () => {
    expect(preview({ a: [1, 'b', null, true], c: -0 })).toBe('{"a":[1,"b",null,true],"c":0}');
  });
});

describe('firstDifference', () => {
  it('walks two equal 100 000-deep documents without recursion', () => {
    expect(firstDifference(deepArray(), deepArray())).toBeNull();
  });

  it('finds the difference at the bottom of a deep document', () => {
    const a = JSON.parse('{"x":'.repeat(10_000) + '1' + '}'.repeat(10_000)) as unknown;
    const b = JSON.parse('{"x":'.repeat(10_000) + '2' + '}'.repeat(10_000)) as unknown;
    expect(firstDifference(a, b)).toBe('/x'.repeat(10_000));
  });

  it('treats -0 and 0 as equal (RFC 8785), and reports a missing key and a length difference', () => {
    expect(firstDifference({ a: -0 }, { a: 0 })).toBeNull();
    expect(firstDifference({ a: 1, b: 2 }, { a: 1 })).toBe('/b');
    expect(firstDifference([1, 2], [1, 2, 3])).toBe('/2');
    expect(firstDifference({ constructor: 1 }, {})).toBe('/constructor');
  });
});

describe('jsonDuplicateKey', () => {
  it('finds the second occurrence of a key, escapes included, with its pointer and offset', () => {
    expect(jsonDuplicateKey('{"a":{"b":[{"x":1,"y":2},{"x":1,"x":"\\"x"}]}}')).toEqual({ pointer: '/a/b/1/x', offset: 32, first_offset: 26 });
    expect(jsonDuplicateKey('{"a\\u0062":1,"ab":2}')).toEqual({ pointer: '/ab', offset: 13, first_offset: 1 });
    expect(jsonDuplicateKey('{"a/b":{"k":1,"k":2}}')).toEqual({ pointer: '/a~1b/k', offset: 14, first_offset: 8 });
  });

  it('accepts equal keys in different objects', () => {
    expect(jsonDuplicateKey('[{"k":1},{"k":2},{"a":{"k":3}}]')).toBeNull();
  });
});

describe('validatePacket', () => {
  it('reports a 50 000-deep value in a field as a schema error, not an internal error', () => {
    const value = JSON.parse('{"schema_version":' + '['.repeat(50_000) + ']'.repeat(50_000) + '}') as unknown;
    const r = validatePacket(value, { file: 'deep.json' });
    expect(r.valid).toBe(false);
    expect(r.errors.find((e) => e.pointer === '/schema_version')).toMatchObject({ rule: 'schema.const', message: `schema_version is ${'['.repeat(59)}…` });
  });
});

describe('validateCapture', () => {
  it('checks a 100 000-deep raw_output against parsed_output without overflowing the stack', () => {
    const raw = '['.repeat(DEEP) + ']'.repeat(DEEP);
    const r = validateCapture({ raw_output: raw, parsed_output: JSON.parse(raw) as unknown }, { file: 'c.json' });
    expect(r.errors.filter((e) => e.rule.startsWith('capture.raw_output'))).toEqual([]);
    const bad = validateCapture({ raw_output: '['.repeat(DEEP), parsed_output: {} }, { file: 'c.json' });
    expect(bad.errors.find((e) => e.rule === 'capture.raw_output_not_json')?.message).toBe(`raw_output is not JSON: unexpected end of input at line 1, column ${DEEP + 1} of raw_output`);
  });
});

describe('parseJsonDocument', () => {
  it('throws bad_json (exit 2) with line and column for 200 000 unclosed brackets', () => {
    let err: unknown;
    try {
      parseJsonDocument('['.repeat(200_000), 'deep.json');
    } catch (e) {
      err = e;
    }
    expect(isLoretraceError(err) && [err.code, err.message, err.exitCode]).toEqual(['bad_json', 'deep.json is not JSON: unexpected end of input at line 1, column 200001', 2]);
  });
});
