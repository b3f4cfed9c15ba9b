/** The named steps of compilePolicy, each on its own (the entry point's behaviour is in policy.test.ts). */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import {
  authorOnlyReason, compileContext, compileFollowClasses, compileFutureEra, compileStopEffects, readPolicyFields, receiptTotals,
} from '../src/policy/compile.js';
import type { TraversalPolicy } from '../src/contracts/types.js';
import type { NoteRecord, VaultIndex } from '../src/types.js';
import { FIXTURE_VAULT } from './helpers/shared.js';
import { checkPath, compilePolicy } from '../src/policy/index.js';

let index: VaultIndex;
beforeAll(async () => {
  index = await indexVault(FIXTURE_VAULT, { persist: false });
});

function code(fn: () => unknown): [string, string | undefined, string] {
  try {
    fn();
  } catch (e) {
    const err = e as { code: string; message: string; details: { pointer?: string } };
    return [err.code, err.details.pointer, err.message];
  }
  throw new Error('expected a refusal');
}

describe('readPolicyFields', () => {
  it('returns the five fields of a well-formed policy', () => {
    const ctx = compileContext({ index });
    const p = { max_link_depth: 1, allowed_prefixes: ['FixtureLore:World/'], required_seed_refs: [], follow_link_classes: ['wikilink'], stop_conditions: ['max_refs:3'] };
    expect(readPolicyFields(ctx, p)).toEqual({ depth: 1, prefixes: ['FixtureLore:World/'], seeds: [], follow: ['wikilink'], stops: ['max_refs:3'] });
  });

  it('names the list entry that is not a non-empty string, under the packet base pointer', () => {
    const ctx = compileContext({ index, packet: {} });
    const p = { max_link_depth: 1, allowed_prefixes: ['FixtureLore:World/'], required_seed_refs: [''], follow_link_classes: [], stop_conditions: [] } as TraversalPolicy;
    expect(code(() => readPolicyFields(ctx, p))).toEqual([
      'bad_policy',
      '/lore_access/traversal_policy/required_seed_refs/0',
      'traversal_policy /lore_access/traversal_policy/required_seed_refs/0 must be a non-empty string (got "")',
    ]);
  });
});

describe('compileStopEffects', () => {
  it('keeps the tightest budget and the clause it came from', () => {
    const s = compileStopEffects(compileContext({ index }), ['max_refs:9', 'stop after 4 notes', 'min_relevance:0.2', 'min_relevance:0.5', 'deny_class:events']);
    expect(s.budgets).toEqual({ max_refs: 4, max_chunks: null, max_chars: null, min_relevance: 0.5, min_relative_relevance: null, min_score_ratio: null, time_budget_ms: null });
    expect(s.budgetSource).toEqual({ max_refs: 1, min_relevance: 3 });
    expect([...s.deniedClasses]).toEqual(['events']);
    expect(s.futureOn).toBe(false);
  });

  it('refuses a deny_prefix that is not a ref, naming its clause', () => {
    expect(code(() => compileStopEffects(compileContext({ index }), ['max_refs:2', 'deny_prefix:../up'])).slice(0, 2)).toEqual(['bad_policy', '/stop_conditions/1']);
  });
});

describe('authorOnlyReason', () => {
  const note = (frontmatter: Record<string, unknown> | null, path = 'World/X.md'): NoteRecord =>
    ({ path, frontmatter, frontmatter_lines: frontmatter ? { line_start: 1, line_end: 3 } : null } as unknown as NoteRecord);
  const none = { bad: new Set<string>(), repeatedVisibility: new Set<string>() };
  it.each([
    [{ visibility: ['public', 'Author-Only'] }, { key: 'visibility', why: 'its frontmatter marks it visibility: Author-Only' }],
    [{ Hidden: 'yes' }, { key: 'Hidden', why: 'its frontmatter marks it Hidden: yes' }],
    [{ author_only: true }, { key: 'author_only', why: 'its frontmatter marks it author_only: true' }],
    [{ visibility: 'public', hidden: 'no' }, null],
    // Fail closed: a visibility value that is no public one, any marker value but a false one, a hiding tag.
    [{ visibility: 'draft' }, { key: 'visibility', why: 'its frontmatter marks it visibility: draft' }],
    [{ visibility: [] }, { key: 'visibility', why: 'its frontmatter marks it visibility: []' }],
    [{ visibility: ' Shared ', GM_Only: 'maybe' }, { key: 'GM_Only', why: 'its frontmatter marks it GM_Only: maybe' }],
    [{ 'Author Only': ['no', 'yes'] }, { key: 'Author Only', why: 'its frontmatter marks it Author Only: ["no","yes"]' }],
    [{ tag: 'harbor #GM_only' }, { key: 'tag', why: 'its frontmatter tags it tag: #GM_only' }],
    [{ private: 'OFF', secret: 0, hidden: null, tags: ['hiddenness', 'secrets'] }, null],
  ])('reads %j', (fm, expected) => {
    expect(authorOnlyReason(note(fm), none, ['World/'])).toEqual(expected);
  });

  it('fails closed on a repeated visibility key only inside allowed_prefixes', () => {
    const failClosed = { bad: new Set<string>(), repeatedVisibility: new Set(['World/X.md']) };
    expect(authorOnlyReason(note({ visibility: 'public' }), failClosed, ['World/'])?.key).toBe('visibility');
    expect(authorOnlyReason(note({ visibility: 'public' }), failClosed, ['Other/'])).toBeNull();
  });
});

describe('compileFutureEra', () => {
  it('is empty unless a stop condition asks for it', () => {
    expect(compileFutureEra(compileContext({ index }), false, ['World/'])).toEqual({ future: [], waivers: [], rows: [] });
  });

  it('denies every Post-Elysium/ folder by default, with its note count', () => {
    const f = compileFutureEra(compileContext({ index }), true, ['World/']);
    expect(f.future).toEqual([{ prefix: 'World/Post-Elysium/', pointer: '#/default/future_era_prefixes/0' }]);
    expect(f.rows.map((r) => [r.clause, r.matches, r.rule])).toEqual([
      ['World/Post-Elysium/', 3, 'never consult World/Post-Elysium/ (default: every Post-Elysium/ folder, names compared folded (case, accents, -, _, spaces and Unicode dashes ignored))'],
    ]);
  });

  it('reads a Post-Elysium folder name folded, fail closed: case, accents, -, _, spaces, Unicode dashes and trailing spaces', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'loretrace-future-fold-'));
    try {
      const vault = join(tmp, 'FixtureLore');
      cpSync(FIXTURE_VAULT, vault, { recursive: true });
      const folders = ['World/post-elysium', 'World/POST-ELYSIUM', 'World/Post_Elysium', 'World/Post Elysium', 'World/Post\u2010Elysium', 'World/Post-\u00c9lysium', 'World/Post-Elysium ', 'World/Post-Elysium.d', 'World/Pre-Elysium/Post-Elysium'];
      folders.forEach((f, i) => {
        mkdirSync(join(vault, f), { recursive: true });
        writeFileSync(join(vault, f, `N${i}.md`), `# N${i}\n\nFuture era secret ${i}.\n`);
      });
      const folded = await indexVault(vault, { persist: false });
      const f = compileFutureEra(compileContext({ index: folded }), true, ['World/']);
      expect(f.future.map((x) => x.prefix)).toEqual([
        'World/POST-ELYSIUM/', 'World/Post Elysium/', 'World/Post-Elysium /', 'World/Post-Elysium/', 'World/Post-\u00c9lysium/',
        'World/Post_Elysium/', 'World/Post\u2010Elysium/', 'World/Pre-Elysium/Post-Elysium/', 'World/post-elysium/',
      ]);
      expect(f.rows.every((r) => r.rule.includes('names compared folded'))).toBe(true);
      // Another name is another folder: Post-Elysium.d is not future-era.
      const c = compilePolicy({ max_link_depth: 1, allowed_prefixes: ['FixtureLore:World/'], required_seed_refs: [], follow_link_classes: ['wikilink'], stop_conditions: ['stop before post-Elysium or future-outcome lore unless the packet explicitly requests it'] }, { index: folded });
      expect(checkPath(c, 'World/post-elysium/N0.md')).toEqual({ ok: false, reason: 'future_era', detail: 'World/post-elysium/N0.md is future-era lore (World/post-elysium/, #/default/future_era_prefixes/8)' });
      expect(checkPath(c, 'World/Post-Elysium.d/N7.md')).toEqual({ ok: true });
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('compileFollowClasses', () => {
  it('sorts each rule table and keeps one row per entry', () => {
    const f = compileFollowClasses(compileContext({ index }), ['prose', 'wikilink', 'embed', 'backlink', 'tag']);
    expect(f.follow).toEqual({ syntaxes: ['embed', 'wikilink'], positions: ['prose'], classes: [], backlink: true });
    expect(f.rows.map((r) => r.disposition)).toEqual(['enforced', 'enforced', 'enforced', 'enforced', 'advisory']);
  });
});

describe('receiptTotals', () => {
  it('counts zeros too', () => {
    expect(receiptTotals([])).toEqual({ enforced: 0, partially_enforced: 0, advisory: 0 });
  });
});

describe('unenforcedQualifiers', () => {
  it('names the words that map to no class, leaving out function words and what every followed link is', async () => {
    const { mapLinkClassPhrase, unenforcedQualifiers } = await import('../src/policy/synonyms.js');
    const phrase = 'resident Jovian factions and institutions';
    expect(unenforcedQualifiers(phrase, mapLinkClassPhrase(phrase, new Set(['factions'])))).toEqual(['resident', 'jovian']);
    const implied = 'referenced factions docs with the institutions';
    expect(unenforcedQualifiers(implied, mapLinkClassPhrase(implied, new Set(['factions'])))).toEqual([]);
  });
});

describe('the responder view of class rules', () => {
  it('knows only the classes of the notes it admits, so a class only hidden or future-era notes have is absent from it', () => {
    const policy = { max_link_depth: 1, allowed_prefixes: ['World/Pre-Elysium/'], required_seed_refs: ['World/Pre-Elysium/Territories.md'], follow_link_classes: ['wikilink'], stop_conditions: ['deny_class:author-notes', 'deny_class:post-elysium'] };
    const rule = (c: ReturnType<typeof compilePolicy>) => c.receipt.filter((r) => r.kind === 'stop_condition').map((r) => r.rule);
    const runner = compilePolicy(policy, { index });
    // The runner's receipt: both classes exist in the snapshot (Author Notes/Brinefall Truth.md, World/Post-Elysium/).
    expect(rule(runner)).toEqual(['structured token: never consult notes of class author-notes', 'structured token: never consult notes of class post-elysium']);
    const view = compilePolicy(policy, { index, responderView: { admits: (p) => checkPath(runner, p).ok } });
    expect(rule(view)).toEqual(['structured token: never consult notes of class author-notes (no note has it)', 'structured token: never consult notes of class post-elysium (no note has it)']);
  });
});
