// Hostile refs (breaker regressions): numbers beyond 2^53, unpaired surrogates, bidi controls.
import { describe, expect, it } from 'vitest';
import { parseRef } from '../src/refs/index.js';
import { isLoretraceError } from '../src/errors.js';

function refusal(input: string): { code: string; message: string } {
  try {
    parseRef(input, { namespace: 'FixtureLore' });
  } catch (e) {
    if (isLoretraceError(e)) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error(`parseRef accepted ${JSON.stringify(input)}`);
}

describe('parseRef', () => {
  it('refuses a line number beyond 2^53-1 instead of rounding it (L99999999999999999999 became L100000000000000000000)', () => {
    expect(refusal('FixtureLore:Home.md#L99999999999999999999')).toEqual({
      code: 'bad_ref',
      message: 'ref "FixtureLore:Home.md#L99999999999999999999" is not a valid lore ref: its line number 99999999999999999999 is larger than 9007199254740991',
    });
    expect(refusal('FixtureLore:Home.md#L1-L9007199254740992').message).toBe(
      'ref "FixtureLore:Home.md#L1-L9007199254740992" is not a valid lore ref: its line number 9007199254740992 is larger than 9007199254740991',
    );
  });

  it('refuses a chunk number beyond 2^53-1', () => {
    expect(refusal('FixtureLore:Home.md#chunk99999999999999999999')).toEqual({
      code: 'bad_ref',
      message: 'ref "FixtureLore:Home.md#chunk99999999999999999999" is not a valid lore ref: its chunk number 99999999999999999999 is larger than 9007199254740991',
    });
  });

  it('still accepts the largest safe line and chunk numbers', () => {
    expect(parseRef('FixtureLore:Home.md#L9007199254740991', { namespace: 'FixtureLore' }).fragment).toEqual({ kind: 'lines', start: 9007199254740991, end: 9007199254740991 });
    expect(parseRef('FixtureLore:Home.md#chunk9007199254740991', { namespace: 'FixtureLore' }).fragment).toEqual({ kind: 'chunk', index: 9007199254740991 });
  });

  it('refuses an unpaired surrogate (no file name can hold it; JSON output would carry \\ud800)', () => {
    expect(refusal('FixtureLore:World/\ud800/')).toEqual({
      code: 'bad_ref',
      message: 'ref "FixtureLore:World/\\ud800/" is not a valid lore ref: it contains an unpaired UTF-16 surrogate (not Unicode text)',
    });
    expect(refusal('FixtureLore:Home.md#\udc00x').code).toBe('bad_ref');
  });

  it('accepts a surrogate pair (an emoji in a note name)', () => {
    expect(parseRef('FixtureLore:Notes/\u{1F30A} Tide.md', { namespace: 'FixtureLore' }).path).toBe('Notes/\u{1F30A} Tide.md');
  });

  it('refuses bidirectional override characters (a ref must read as it is)', () => {
    expect(refusal('FixtureLore:World/\u202Edm.seirotirreT')).toEqual({
      code: 'bad_ref',
      message: 'ref "FixtureLore:World/\u202Edm.seirotirreT" is not a valid lore ref: it contains a bidirectional control character (U+202A–U+202E, U+2066–U+2069)',
    });
    expect(refusal('FixtureLore:Home.md#\u2066x\u2069').code).toBe('bad_ref');
  });
});
