// Hostile traversal policies (breaker regressions): each case once crashed, hung or misread a policy.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { compilePolicy, parsePolicyDocument, parseStopCondition } from '../src/policy/index.js';
import { mapLinkClassPhrase } from '../src/policy/synonyms.js';
import type { TraversalPolicy } from '../src/contracts/types.js';
import type { VaultIndex } from '../src/types.js';
import { isLoretraceError } from '../src/errors.js';
import { FIXTURE_VAULT } from './helpers/shared.js';

let index: VaultIndex;
beforeAll(async () => {
  index = await indexVault(FIXTURE_VAULT, { persist: false });
});

const base: TraversalPolicy = {
  max_link_depth: 1,
  allowed_prefixes: ['FixtureLore:World/Pre-Elysium/'],
  required_seed_refs: ['FixtureLore:World/Pre-Elysium/Territories.md'],
  follow_link_classes: ['wikilink'],
  stop_conditions: [],
};

function compileError(policy: unknown, packet?: unknown): { code: string; message: string; pointer: unknown } {
  try {
    compilePolicy(policy as TraversalPolicy, { index, ...(packet ? { packet: packet as never } : {}) });
  } catch (e) {
    if (isLoretraceError(e)) return { code: e.code, message: e.message, pointer: e.details.pointer };
    throw e;
  }
  throw new Error('compilePolicy did not throw');
}

function parseError(text: string, kind: 'policy' | 'packet' = 'policy'): { code: string; message: string; pointer: unknown; line: unknown } {
  try {
    parsePolicyDocument(text, 'p.json', kind);
  } catch (e) {
    if (isLoretraceError(e)) return { code: e.code, message: e.message, pointer: e.details.pointer, line: e.details.line };
    throw e;
  }
  throw new Error('parsePolicyDocument did not throw');
}

describe('mapLinkClassPhrase', () => {
  it('maps a word that names an Object.prototype member ("constructor") to nothing instead of crashing', () => {
    expect(mapLinkClassPhrase('constructor __proto__ toString hasOwnProperty', new Set())).toEqual({ words: [], classes: [] });
  });

  it('still maps real words next to it', () => {
    expect(mapLinkClassPhrase('constructors of factions', new Set())).toEqual({ words: [{ word: 'factions', classes: ['factions'], via: 'synonym' }], classes: ['factions'] });
  });
});

describe('parseStopCondition', () => {
  it('matches a 400 000-character clause of stop verbs in linear time (once a quadratic regex backtrack)', () => {
    expect(parseStopCondition('stop '.repeat(80_000))).toEqual({ form: 'unrecognised', effects: [] });
    expect(parseStopCondition('stop '.repeat(80_000) + 'post-Elysium')).toEqual({ form: 'english', effects: [{ kind: 'deny_future_era' }], patterns: ['future_era'], dropped: [], exceptions: [] });
    const t0 = performance.now();
    const many = parseStopCondition('stop after 3 notes ' + 'unless x. '.repeat(40_000));
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(many.form === 'english' && many.exceptions).toEqual(['unless x']);
  });

  it('keeps the line rule of the old regex: the verb and the keyword must share a line', () => {
    expect(parseStopCondition('avoid\nhidden lore').form).toBe('unrecognised');
    expect(parseStopCondition('avoid the hidden lore').form).toBe('english');
    expect(parseStopCondition('the hidden lore, avoid').form).toBe('unrecognised');
  });

  it('refuses an English budget beyond 2^53-1 instead of reading it as Infinity', () => {
    expect(parseStopCondition(`stop after ${'9'.repeat(400)} notes`)).toEqual({
      form: 'bad_token',
      error: 'max_refs needs a whole number ≥ 1 no larger than 9007199254740991',
      expected: 'max_refs N with 1 ≤ N ≤ 9007199254740991',
    });
  });
});

describe('compilePolicy', () => {
  it('compiles a follow_link_classes entry "constructor" (advisory) instead of an internal error', () => {
    const c = compilePolicy({ ...base, follow_link_classes: ['constructor'] }, { index });
    const row = c.receipt.find((r) => r.kind === 'follow_link_class');
    expect(row?.disposition).toBe('advisory');
  });

  it('refuses max_link_depth 1e309 (Infinity), naming it as written', () => {
    expect(compileError({ ...base, max_link_depth: Number.POSITIVE_INFINITY })).toEqual({
      code: 'bad_policy',
      message: 'traversal_policy /max_link_depth must be an integer ≥ 0 (got Infinity)',
      pointer: '/max_link_depth',
    });
  });

  it('refuses max_link_depth 1e300 (not a safe integer)', () => {
    expect(compileError({ ...base, max_link_depth: 1e300 })).toEqual({
      code: 'bad_policy',
      message: 'traversal_policy /max_link_depth must be an integer ≥ 0 no larger than 9007199254740991 (got 1e+300)',
      pointer: '/max_link_depth',
    });
  });

  it('keeps a message short when the bad value is a 1 MB string or a 100 000-deep array', () => {
    const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000)) as unknown;
    const e1 = compileError({ ...base, allowed_prefixes: deep });
    expect(e1.code).toBe('bad_policy');
    expect(e1.pointer).toBe('/allowed_prefixes/0');
    expect(e1.message).toBe(`traversal_policy /allowed_prefixes/0 must be a non-empty string (got ${'['.repeat(119)}…)`);
    const e2 = compileError({ ...base, stop_conditions: ['max_refs:' + '1'.repeat(1_000_000)] });
    expect(e2.message.length).toBeLessThan(400);
    expect(e2.message).toBe(`traversal_policy /stop_conditions/0 "max_refs:${"1".repeat(109)}…: max_refs needs a whole number ≥ 1 (got "${"1".repeat(99)}…")`);
  });

  it('refuses a packet whose allowed_scope or omitted_context_refs is not a list, with the pointer', () => {
    expect(compileError(base, { lore_access: { allowed_scope: 'FixtureLore:World/' } })).toEqual({
      code: 'bad_policy',
      message: 'packet /lore_access/allowed_scope must be a list of strings (got "FixtureLore:World/")',
      pointer: '/lore_access/allowed_scope',
    });
    expect(compileError(base, { hidden_context_audit: { omitted_context_refs: { a: 1 } } })).toEqual({
      code: 'bad_policy',
      message: 'packet /hidden_context_audit/omitted_context_refs must be a list of strings (got {"a":1})',
      pointer: '/hidden_context_audit/omitted_context_refs',
    });
    expect(compileError(base, { hidden_context_audit: 'x' })).toEqual({
      code: 'bad_policy',
      message: 'packet /hidden_context_audit must be an object (got "x")',
      pointer: '/hidden_context_audit',
    });
  });

  it('writes a non-string allowed_scope / hidden entry as a string clause (the receipt schema wants strings)', () => {
    const c = compilePolicy(base, { index, packet: { lore_access: { allowed_scope: [null, 5] }, hidden_context_audit: { omitted_context_refs: [{ a: 1 }] } } as never });
    const rows = c.receipt.filter((r) => r.kind === 'allowed_scope' || r.kind === 'hidden_ref').map((r) => [r.kind, r.clause, r.disposition]);
    expect(rows).toEqual([
      ['allowed_scope', 'null', 'advisory'],
      ['allowed_scope', '5', 'advisory'],
      ['hidden_ref', '{"a":1}', 'advisory'],
    ]);
  });
});

describe('parsePolicyDocument', () => {
  it('names line and column when the text is not JSON (bad_json, the strict reader every input goes through)', () => {
    expect(parseError('{"max_link_depth": 2,\n')).toEqual({ code: 'bad_json', message: 'p.json is not JSON: unexpected end of input at line 2, column 1', pointer: undefined, line: 2 });
    expect(parseError('')).toEqual({ code: 'bad_json', message: 'p.json is not JSON: unexpected end of input at line 1, column 1', pointer: undefined, line: 1 });
  });

  it('reports 200 000 unclosed brackets as not JSON, not as a stack overflow', () => {
    expect(parseError('['.repeat(200_000)).message).toBe('p.json is not JSON: unexpected end of input at line 1, column 200001');
  });

  it('refuses a duplicate key, which JSON.parse would silently resolve to the last value', () => {
    const text = '{"max_link_depth": 1,\n "max_link_depth": 50, "allowed_prefixes": [], "required_seed_refs": [], "follow_link_classes": [], "stop_conditions": []}';
    expect(parseError(text)).toEqual({
      code: 'duplicate_key',
      message: 'p.json has the key /max_link_depth twice (line 1 and line 2); JSON readers keep only the last value, so the document would not be applied as a reviewer reads it; expected each key once per object',
      pointer: '/max_link_depth',
      line: 2,
    });
    expect(parseError('{"lore_access": {"traversal_policy": {}, "x": [{"a": 1, "a\\u0062": 2, "ab": 3}]}}', 'packet').pointer).toBe('/lore_access/x/0/ab');
  });

  it('accepts a BOM and equal keys in different objects', () => {
    expect(parsePolicyDocument('\uFEFF{"a": {"k": 1}, "b": {"k": 2}}', 'p.json', 'policy').policy).toEqual({ a: { k: 1 }, b: { k: 2 } });
  });
});

describe('loretrace traverse with hostile files (CLI)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'loretrace-hostile-policy-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a policy file holding 1e309 through the CLI path as non_finite_number, before the policy is compiled', async () => {
    const { main } = await import('../src/cli/main.js');
    const f = join(dir, 'inf.policy.json');
    writeFileSync(f, JSON.stringify(base).replace('"max_link_depth":1', '"max_link_depth":1e309'));
    let err = '';
    const code = await main(['traverse', '--lore', FIXTURE_VAULT, '--policy', f], { stdout: () => {}, stderr: (t) => void (err += t), env: { LORETRACE_INDEX_DIR: join(dir, 'idx') }, cwd: dir, isTTY: false });
    // The JSON reader refuses the literal before the policy sees it: a number past the largest double would be
    // read as Infinity and written back as null (non_finite_number, an unreadable option file: exit 2).
    const column = JSON.stringify(base).indexOf('"max_link_depth":1') + '"max_link_depth":'.length + 1;
    expect(code).toBe(2);
    expect(err).toBe(`loretrace: ${f} has the number 1e309 at /max_link_depth (line 1, column ${column}), beyond the largest number a JSON reader keeps (±1.7976931348623157e+308); it would be read as Infinity and written back as null; expected a finite number [non_finite_number]\n`);
  });
});

describe('compilePolicy: notes that hide themselves in frontmatter', () => {
  const dir = mkdtempSync(join(tmpdir(), 'loretrace-hostile-hidden-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const notes: Record<string, string> = {
    'Dup.md': '---\nvisibility: public\nvisibility: author-only\n---\n# Dup\nsecret\n',
    'DupLast.md': '---\nvisibility: author-only\nvisibility: public\n---\n# DupLast\nsecret\n',
    'Broken.md': '---\nvisibility: author-only\ntitle: [unclosed\n---\n# Broken\nsecret\n',
    'Laughs.md': '---\na: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\nvisibility: author-only\n---\n# Laughs\nsecret\n',
    'List.md': '---\nvisibility: [author-only]\n---\n# List\nsecret\n',
    'Key.md': '---\nVisibility: Author-Only\n---\n# Key\nsecret\n',
    'Str.md': '---\nhidden: "true"\n---\n# Str\nsecret\n',
    'Public.md': '---\nvisibility: public\n---\n# Public\nopen\n',
    'Empty.md': '---\n---\n# Empty\nopen\n',
  };
  let vault: VaultIndex;
  beforeAll(async () => {
    mkdirSync(join(dir, 'Lore', 'In'), { recursive: true });
    for (const [name, text] of Object.entries(notes)) writeFileSync(join(dir, 'Lore', 'In', name), text);
    writeFileSync(join(dir, 'Lore', 'Outside.md'), '---\ntitle: [unclosed\n---\n# Outside\n');
    vault = await indexVault(join(dir, 'Lore'), { persist: false });
  });

  it('denies notes whose frontmatter cannot be parsed (fail closed) and catches list, key-case and string-true markers', () => {
    const c = compilePolicy({ max_link_depth: 1, allowed_prefixes: ['Lore:In/'], required_seed_refs: [], follow_link_classes: ['wikilink'], stop_conditions: [] }, { index: vault });
    const rows = c.receipt.filter((r) => r.kind === 'hidden_note').map((r) => [r.clause, r.rule]);
    expect(rows).toEqual([
      ['In/Broken.md', 'never consult In/Broken.md (its frontmatter block cannot be parsed (bad_frontmatter), so it may be marked author-only; denied until it parses (fail closed))'],
      // Duplicate visibility keys fail closed whatever the last value says (the notes stage keeps the last value,
      // as Obsidian does, and records duplicate_frontmatter_key).
      ['In/Dup.md', 'never consult In/Dup.md (its frontmatter repeats a visibility key, so one of its values may mark it author-only; denied until the repeat is removed (fail closed))'],
      ['In/DupLast.md', 'never consult In/DupLast.md (its frontmatter repeats a visibility key, so one of its values may mark it author-only; denied until the repeat is removed (fail closed))'],
      ['In/Key.md', 'never consult In/Key.md (its frontmatter marks it Visibility: Author-Only)'],
      ['In/Laughs.md', 'never consult In/Laughs.md (its frontmatter block cannot be parsed (bad_frontmatter), so it may be marked author-only; denied until it parses (fail closed))'],
      ['In/List.md', 'never consult In/List.md (its frontmatter marks it visibility: author-only)'],
      ['In/Str.md', 'never consult In/Str.md (its frontmatter marks it hidden: true)'],
    ]);
  });
});
