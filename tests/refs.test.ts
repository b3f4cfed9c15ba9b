import { beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { formatRef, isUnderPrefix, parseRef, resolveRef } from '../src/refs/index.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURE_VAULT } from './helpers/shared.js';

const NS = { namespace: 'FixtureLore' };

function badRef(input: string): string {
  try {
    parseRef(input, NS);
  } catch (e) {
    expect((e as { code: string }).code).toBe('bad_ref');
    return (e as Error).message;
  }
  throw new Error(`parseRef accepted ${JSON.stringify(input)}`);
}

describe('parseRef', () => {
  it('parses a namespaced note ref without fragment', () => {
    expect(parseRef('FixtureLore:World/Pre-Elysium/Territories.md', NS)).toEqual({
      namespace: 'FixtureLore', path: 'World/Pre-Elysium/Territories.md', fragment: null, is_prefix: false,
    });
  });

  it('gives a ref without namespace the vault namespace', () => {
    expect(parseRef('World/index.md', NS).namespace).toBe('FixtureLore');
  });

  it.each([
    ['World/a.md#chunk3', { kind: 'chunk', index: 3 }],
    ['World/a.md#chunk0', { kind: 'chunk', index: 0 }],
    ['World/a.md#L10-L20', { kind: 'lines', start: 10, end: 20 }],
    ['World/a.md#L7', { kind: 'lines', start: 7, end: 7 }],
    ['World/a.md#^oath', { kind: 'block', id: 'oath' }],
    ['World/a.md#Rescue Ledgers', { kind: 'heading', text: 'Rescue Ledgers' }],
    ['World/a.md#chunk03', { kind: 'heading', text: 'chunk03' }],
  ])('parses fragment %s', (input, fragment) => {
    expect(parseRef(input, NS).fragment).toEqual(fragment);
  });

  it('marks a path ending in / as a folder prefix', () => {
    expect(parseRef('FixtureLore:World/Pre-Elysium/', NS)).toEqual({
      namespace: 'FixtureLore', path: 'World/Pre-Elysium/', fragment: null, is_prefix: true,
    });
  });

  it('NFC-normalises the ref once', () => {
    const nfd = 'World/Framga\u030Ang.md';
    expect(parseRef(nfd, NS).path).toBe('World/Framg\u00E5ng.md');
  });

  it.each([
    ['World/../secret.md', 'it contains a ".." segment'],
    ['World/./a.md', 'it contains a "." segment'],
    ['World//a.md', 'it contains an empty segment ("//")'],
    ['World\\a.md', 'it contains a backslash'],
    ['/World/a.md', 'it starts with "/"'],
    ['C:/World/a.md', 'it starts with a drive letter (C:)'],
    ['file:///etc/passwd', 'it has a URL scheme (file:)'],
    ['https://example.org/a.md', 'it has a URL scheme (https:)'],
    ['World/Salvage%20Law.md', 'it contains percent-encoding'],
    ['World/a\u0007.md', 'it contains a control character'],
    ['World/a\u0000.md', 'it contains a NUL character'],
    ['OtherVault:World/a.md', 'its namespace OtherVault is not this vault\'s (FixtureLore)'],
    [' World/a.md', 'it has leading or trailing whitespace'],
    ['', 'it is empty'],
    ['World/a.md#', 'its fragment after "#" is empty'],
    ['World/a.md#L9-L3', 'its line range ends (L3) before it starts (L9)'],
    ['World/a.md#L0', 'line numbers start at 1'],
    ['World/a.md#^bad id', 'its block id has characters other than letters, digits, "-" and "_"'],
    ['World/Folder/#Heading', 'a folder prefix cannot carry a fragment'],
  ])('refuses %j with bad_ref', (input, why) => {
    expect(badRef(input)).toBe(`ref ${JSON.stringify(input.normalize('NFC'))} is not a valid lore ref: ${why}`);
  });

  it('names the clause label in the message', () => {
    expect(() => parseRef('../x.md', { namespace: 'FixtureLore', label: 'required_seed_refs[1]' })).toThrow(
      'required_seed_refs[1] "../x.md" is not a valid lore ref: it contains a ".." segment',
    );
  });
});

describe('formatRef', () => {
  it.each([
    [null, 'FixtureLore:World/a.md'],
    [{ kind: 'chunk', index: 2 }, 'FixtureLore:World/a.md#chunk2'],
    [{ kind: 'lines', start: 4, end: 9 }, 'FixtureLore:World/a.md#L4-L9'],
    [{ kind: 'lines', start: 4, end: 4 }, 'FixtureLore:World/a.md#L4'],
    [{ kind: 'block', id: 'oath' }, 'FixtureLore:World/a.md#^oath'],
    [{ kind: 'heading', text: 'Aftermath' }, 'FixtureLore:World/a.md#Aftermath'],
  ] as const)('formats %j', (fragment, expected) => {
    expect(formatRef('FixtureLore', 'World/a.md', fragment)).toBe(expected);
    const back = parseRef(expected, NS);
    expect(formatRef(back.namespace, back.path, back.fragment)).toBe(expected);
  });
});

describe('isUnderPrefix', () => {
  it('matches whole path segments only', () => {
    expect(isUnderPrefix('World/Pre-Elysium/Territories.md', 'World/Pre-Elysium/')).toBe(true);
    expect(isUnderPrefix('World/Pre-Elysium-Extra/Dockside Rumors.md', 'World/Pre-Elysium/')).toBe(false);
    expect(isUnderPrefix('World/Pre-Elysium-Extra/Dockside Rumors.md', 'World/Pre-Elysium')).toBe(false);
    expect(isUnderPrefix('World/Pre-Elysium/Territories.md', 'World/Pre-Elysium')).toBe(true);
  });

  it('treats a prefix naming one note as that note only', () => {
    expect(isUnderPrefix('World/Politics/Salvage Law.md', 'World/Politics/Salvage Law.md')).toBe(true);
    expect(isUnderPrefix('World/Politics/Salvage Law.md.bak', 'World/Politics/Salvage Law.md')).toBe(false);
  });
});

describe('resolveRef', () => {
  let index: VaultIndex;
  beforeAll(async () => {
    index = await indexVault(FIXTURE_VAULT, { persist: false });
  });

  it('resolves a whole note to lines 1..line_count', () => {
    expect(resolveRef(index, 'FixtureLore:World/Pre-Elysium/Territories.md')).toEqual({
      path: 'World/Pre-Elysium/Territories.md', chunk_index: null, line_start: 1, line_end: 14,
    });
  });

  it('resolves #chunkN to the chunk lines', () => {
    expect(resolveRef(index, 'FixtureLore:World/Pre-Elysium/Territories.md#chunk2')).toEqual({
      path: 'World/Pre-Elysium/Territories.md', chunk_index: 2, line_start: 10, line_end: 14,
    });
  });

  it('resolves a heading to its section, case-insensitively as a fallback', () => {
    const expected = { path: 'World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md', chunk_index: 1, line_start: 9, line_end: 13 };
    expect(resolveRef(index, 'World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md#Aftermath')).toEqual(expected);
    expect(resolveRef(index, 'World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md#aftermath')).toEqual(expected);
  });

  it('resolves a top heading to the whole note including nested sections', () => {
    expect(resolveRef(index, 'World/Pre-Elysium/Factions/Movements/Quiet Hands.md#Quiet Hands')).toEqual({
      path: 'World/Pre-Elysium/Factions/Movements/Quiet Hands.md', chunk_index: 0, line_start: 1, line_end: 12,
    });
  });

  it('resolves a block id to its line', () => {
    expect(resolveRef(index, 'World/Pre-Elysium/Factions/Movements/Quiet Hands.md#^oath')).toEqual({
      path: 'World/Pre-Elysium/Factions/Movements/Quiet Hands.md', chunk_index: 1, line_start: 7, line_end: 7,
    });
  });

  it('resolves a line range and names its chunk when it lies inside one', () => {
    expect(resolveRef(index, 'World/Pre-Elysium/Territories.md#L7-L8')).toEqual({
      path: 'World/Pre-Elysium/Territories.md', chunk_index: 1, line_start: 7, line_end: 8,
    });
    expect(resolveRef(index, 'World/Pre-Elysium/Territories.md#L3-L12').chunk_index).toBeNull();
  });

  it.each([
    ['World/Nowhere.md', 'ref World/Nowhere.md: no note World/Nowhere.md in vault FixtureLore'],
    ['World/Pre-Elysium/Territories.md#chunk9', 'ref World/Pre-Elysium/Territories.md#chunk9: World/Pre-Elysium/Territories.md has 3 chunks (0..2), not chunk9'],
    ['World/Pre-Elysium/Territories.md#L10-L99', 'ref World/Pre-Elysium/Territories.md#L10-L99: World/Pre-Elysium/Territories.md has 14 lines, so L10-L99 is outside it'],
    ['World/Pre-Elysium/Territories.md#No Such Heading', 'ref World/Pre-Elysium/Territories.md#No Such Heading: no heading "No Such Heading" in World/Pre-Elysium/Territories.md'],
    ['World/Pre-Elysium/Territories.md#^nope', 'ref World/Pre-Elysium/Territories.md#^nope: no block ^nope in World/Pre-Elysium/Territories.md'],
    ['World/Pre-Elysium/', 'ref World/Pre-Elysium/ names a folder, not a note'],
  ])('throws not_found for %s', (ref, message) => {
    expect(() => resolveRef(index, ref)).toThrow(message);
    try { resolveRef(index, ref); } catch (e) { expect((e as { code: string }).code).toBe('not_found'); }
  });
});
