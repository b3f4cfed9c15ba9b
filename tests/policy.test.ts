import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { main } from '../src/cli/main.js';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { outgoingLinks } from '../src/indexer/lookup.js';
import { looseHiddenMatches } from '../src/policy/compile.js';
import {
  checkEdge, checkPath, compilePolicy, mapLinkClassPhrase, parsePolicyDocument, parseStopCondition,
} from '../src/policy/index.js';
import type { CompiledPolicy, PolicyReceiptRow } from '../src/policy/index.js';
import type { TraversalPolicy } from '../src/contracts/types.js';
import type { LinkRecord, VaultIndex } from '../src/types.js';
import { AETHERIA, FIXTURES, FIXTURE_VAULT, GHOSTLIGHT, hasShared, sharedNotice } from './helpers/shared.js';

const WORLD_POLICY = join(FIXTURES, 'policies', 'world-blackout.policy.json');
const SELLA = join(GHOSTLIGHT, 'packets', 'scene-02-sanctuary-intake.sella_ren.packet.research.v0.json');

const MC = 'World/Pre-Elysium/Factions/Powers/Major/Meridian Compact.md';

function base(over: Partial<TraversalPolicy> = {}): TraversalPolicy {
  return {
    max_link_depth: 2,
    allowed_prefixes: ['FixtureLore:World/Pre-Elysium/', 'FixtureLore:World/Politics/', 'FixtureLore:World/Technology/'],
    required_seed_refs: ['FixtureLore:World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md'],
    follow_link_classes: ['wikilink'],
    stop_conditions: [],
    ...over,
  };
}

function refusal(fn: () => unknown): { code: string; message: string; pointer?: string } {
  try {
    fn();
  } catch (e) {
    const err = e as { code: string; message: string; details: { pointer?: string } };
    return { code: err.code, message: err.message, pointer: err.details.pointer };
  }
  throw new Error('expected a refusal');
}

function rows(c: CompiledPolicy, kind: PolicyReceiptRow['kind']): PolicyReceiptRow[] {
  return c.receipt.filter((r) => r.kind === kind);
}

let index: VaultIndex;
beforeAll(async () => {
  index = await indexVault(FIXTURE_VAULT, { persist: false });
});

function link(source: string, raw: string): LinkRecord {
  const l = outgoingLinks(index, source).find((x) => x.raw === raw);
  if (!l) throw new Error(`no link ${raw} in ${source}`);
  return l;
}

describe('compilePolicy', () => {
  it('writes one receipt row per clause of the world policy, with pointers and note counts', () => {
    const policy = JSON.parse(readFileSync(WORLD_POLICY, 'utf8')) as TraversalPolicy;
    const c = compilePolicy(policy, { index });
    expect(c.receipt.map((r) => [r.kind, r.pointer, r.disposition, r.matches])).toEqual([
      ['max_link_depth', '/max_link_depth', 'enforced', null],
      ['allowed_prefix', '/allowed_prefixes/0', 'enforced', 13],
      ['allowed_prefix', '/allowed_prefixes/1', 'enforced', 2],
      ['allowed_prefix', '/allowed_prefixes/2', 'enforced', 2],
      ['seed', '/required_seed_refs/0', 'enforced', 1],
      ['seed', '/required_seed_refs/1', 'enforced', 1],
      ['follow_link_class', '/follow_link_classes/0', 'partially_enforced', 6],
      ['follow_link_class', '/follow_link_classes/1', 'partially_enforced', 6],
      ['follow_link_class', '/follow_link_classes/2', 'partially_enforced', 6],
      ['follow_link_class', '/follow_link_classes/3', 'partially_enforced', 2],
      ['stop_condition', '/stop_conditions/0', 'enforced', null],
      ['stop_condition', '/stop_conditions/1', 'enforced', 3],
      ['stop_condition', '/stop_conditions/2', 'enforced', 1],
      ['stop_condition', '/stop_conditions/3', 'advisory', null],
      ['hidden_note', '#/frontmatter/World~1Pre-Elysium~1Author Notes~1Brinefall Truth.md/visibility', 'enforced', 1],
      ['future_era_prefix', '#/default/future_era_prefixes/0', 'enforced', 3],
    ]);
    expect(c.receipt_totals).toEqual({ enforced: 11, partially_enforced: 4, advisory: 1 });
    expect(c.receipt[1]!.rule).toBe('admit paths under World/Pre-Elysium/ (whole path segments)');
    expect(c.receipt[8]!.rule).toBe(
      'maps to target classes politics, technology, territories (territory→territories, politics→politics, technology→technology); ' +
        'follow links into notes of these classes; no note has class territories; ' +
        'not enforced: explain, material, constraints (every note of these classes is followed, whatever it says)',
    );
    expect(c.receipt[6]!.rule).toBe(
      'maps to target classes factions (factions→factions, institutions→factions); follow links into notes of these classes; ' +
        'not enforced: resident, harbor (every note of these classes is followed, whatever it says)',
    );
    expect(c.receipt[10]!.rule).toBe('pattern not_relevant: min_relevance:0.3');
    expect(c.receipt[11]!.rule).toBe('pattern future_era: deny future-era prefixes World/Post-Elysium/');
    expect(c.receipt[13]!.rule).toBe('matches no structured token and no documented plain-English pattern; not enforced by the walk (it constrains the answer, not the lookup)');
    expect(c.follow).toEqual({ syntaxes: [], positions: [], classes: ['events', 'factions', 'movements', 'politics', 'technology', 'territories'], backlink: false });
    expect(c.budgets).toEqual({ max_refs: null, max_chunks: null, max_chars: null, min_relevance: 0.3, min_relative_relevance: null, min_score_ratio: null, time_budget_ms: null });
    expect(c.seeds).toEqual(['World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md', 'World/Pre-Elysium/Territories.md']);
  });

  it('refuses max_link_depth -1 naming /max_link_depth', () => {
    expect(refusal(() => compilePolicy(base({ max_link_depth: -1 }), { index }))).toEqual({
      code: 'bad_policy', pointer: '/max_link_depth', message: 'traversal_policy /max_link_depth must be an integer ≥ 0 (got -1)',
    });
  });

  it('refuses an empty allowed_prefixes naming /allowed_prefixes', () => {
    expect(refusal(() => compilePolicy(base({ allowed_prefixes: [] }), { index }))).toEqual({
      code: 'bad_policy', pointer: '/allowed_prefixes', message: 'traversal_policy /allowed_prefixes is empty, so it admits no lore at all',
    });
  });

  it('refuses a seed outside allowed_prefixes naming the seed clause', () => {
    const r = refusal(() => compilePolicy(base({ required_seed_refs: ['FixtureLore:World/Pre-Elysium-Extra/Dockside Rumors.md'] }), { index }));
    expect(r).toEqual({
      code: 'bad_policy',
      pointer: '/required_seed_refs/0',
      message: 'required seed FixtureLore:World/Pre-Elysium-Extra/Dockside Rumors.md (/required_seed_refs/0) is refused by the policy itself: ' +
        'World/Pre-Elysium-Extra/Dockside Rumors.md is outside allowed_prefixes (World/Politics/, World/Pre-Elysium/, World/Technology/)',
    });
  });

  it('refuses an unknown structured stop token naming its clause', () => {
    expect(refusal(() => compilePolicy(base({ stop_conditions: ['stop before post-Elysium lore', 'max_ref:3'] }), { index }))).toEqual({
      code: 'bad_policy',
      pointer: '/stop_conditions/1',
      message: 'traversal_policy /stop_conditions/1 "max_ref:3": unknown structured token "max_ref"',
    });
  });

  it.each([
    ['max_refs:0', 'max_refs needs a whole number ≥ 1 (got "0")'],
    ['max_chars:ten', 'max_chars needs a whole number ≥ 1 (got "ten")'],
    ['min_relevance:1.5', 'min_relevance needs a number from 0 to 1 (got "1.5")'],
    ['min_score_ratio:-0.5', 'min_score_ratio needs a number from 0 to 1 (got "-0.5")'],
    ['deny_class:', 'deny_class needs a value'],
  ])('refuses the malformed token %s', (token, why) => {
    expect(refusal(() => compilePolicy(base({ stop_conditions: [token] }), { index })).message).toBe(
      `traversal_policy /stop_conditions/0 ${JSON.stringify(token)}: ${why}`,
    );
  });

  it('refuses a missing or unknown field', () => {
    const { stop_conditions: _drop, ...missing } = base();
    expect(refusal(() => compilePolicy(missing as TraversalPolicy, { index }))).toMatchObject({ pointer: '/stop_conditions', message: 'traversal_policy is missing /stop_conditions' });
    expect(refusal(() => compilePolicy({ ...base(), max_depth: 3 } as TraversalPolicy, { index }))).toMatchObject({
      pointer: '/max_depth',
      message: 'traversal_policy has an unknown field /max_depth; expected only max_link_depth, allowed_prefixes, required_seed_refs, follow_link_classes, stop_conditions',
    });
  });

  it('prefixes pointers with /lore_access/traversal_policy for a packet', () => {
    expect(refusal(() => compilePolicy(base({ max_link_depth: 1.5 }), { index, packet: {} })).pointer).toBe('/lore_access/traversal_policy/max_link_depth');
  });

  it('fails with seed_not_found naming a missing seed', () => {
    expect(refusal(() => compilePolicy(base({ required_seed_refs: ['FixtureLore:World/Pre-Elysium/Atlantis.md'] }), { index }))).toEqual({
      code: 'seed_not_found',
      pointer: '/required_seed_refs/0',
      message: 'required seed FixtureLore:World/Pre-Elysium/Atlantis.md (/required_seed_refs/0) is not in vault FixtureLore: no note World/Pre-Elysium/Atlantis.md',
    });
  });

  it('fails with seed_not_found when a seed fragment does not exist', () => {
    const r = refusal(() => compilePolicy(base({ required_seed_refs: ['World/Pre-Elysium/Territories.md#Atlantis'] }), { index }));
    expect(r.code).toBe('seed_not_found');
    expect(r.message).toBe('required seed World/Pre-Elysium/Territories.md#Atlantis (/required_seed_refs/0): ref FixtureLore:World/Pre-Elysium/Territories.md#Atlantis: no heading "Atlantis" in World/Pre-Elysium/Territories.md');
  });

  it('refuses a seed that is a bad ref with the bad_ref reason', () => {
    expect(refusal(() => compilePolicy(base({ required_seed_refs: ['World/../x.md'] }), { index })).message).toBe(
      'traversal_policy /required_seed_refs/0: required_seed_refs[0] "World/../x.md" is not a valid lore ref: it contains a ".." segment',
    );
  });

  it('refuses a hidden seed', () => {
    const r = refusal(() => compilePolicy(base({ required_seed_refs: ['World/Pre-Elysium/Author Notes/Brinefall Truth.md'] }), { index }));
    expect(r.message).toContain('is refused by the policy itself: World/Pre-Elysium/Author Notes/Brinefall Truth.md is hidden');
  });

  it('refuses max_refs smaller than the seeds', () => {
    const p = base({ required_seed_refs: ['World/Pre-Elysium/Territories.md', 'World/Pre-Elysium/index.md'], stop_conditions: ['max_refs:1'] });
    expect(refusal(() => compilePolicy(p, { index }))).toMatchObject({ pointer: '/stop_conditions/0', message: 'traversal_policy /stop_conditions/0: max_refs 1 is smaller than the 2 required seeds' });
  });

  it('maps class names by syntax, position, target class and backlink', () => {
    const c = compilePolicy(base({ follow_link_classes: ['embed', 'field', 'events', 'backlink', 'external'] }), { index });
    expect(c.follow).toEqual({ syntaxes: ['embed'], positions: ['field'], classes: ['events'], backlink: true });
    expect(rows(c, 'follow_link_class').map((r) => [r.disposition, r.rule])).toEqual([
      ['enforced', 'follow embed links (syntax class)'],
      ['enforced', 'follow links that stand in a field position (position class)'],
      ['enforced', 'follow links into notes of target class events'],
      ['enforced', 'walk inbound links in reverse (backlink)'],
      ['advisory', 'external links never lead to a lore note; nothing to follow'],
    ]);
  });

  it('marks a phrase that maps to nothing advisory', () => {
    const c = compilePolicy(base({ follow_link_classes: ['whatever seems interesting'] }), { index });
    expect(rows(c, 'follow_link_class')[0]).toMatchObject({ disposition: 'advisory', matches: 0 });
    expect(c.follow.classes).toEqual([]);
  });

  it('extends the synonym table from vault config link_class_synonyms', () => {
    const c = compilePolicy(base({ follow_link_classes: ['salvage crews and cartels'] }), { index, config: { link_class_synonyms: { cartel: ['powers'], salvage: ['politics'] } } });
    expect(rows(c, 'follow_link_class')[0]!.rule).toBe(
      'maps to target classes politics, powers (salvage→politics (vault config), cartels→powers (vault config)); follow links into notes of these classes; not enforced: crews (every note of these classes is followed, whatever it says)',
    );
    expect(rows(compilePolicy(base({ follow_link_classes: ['referenced factions and institutions docs'] }), { index }), 'follow_link_class').map((r) => [r.disposition, r.matches])).toEqual([['enforced', 6]]);
  });

  it('compiles structured tokens into budgets, the tightest winning', () => {
    const c = compilePolicy(base({ stop_conditions: ['max_refs:5', 'max_refs:3', 'max_chunks:4', 'max_chars:700', 'min_relevance:0.5', 'time_budget_ms:2000', 'stop after 4 notes'] }), { index });
    expect(c.budgets).toEqual({ max_refs: 3, max_chunks: 4, max_chars: 700, min_relevance: 0.5, min_relative_relevance: null, min_score_ratio: null, time_budget_ms: 2000 });
    expect(compilePolicy(base({ stop_conditions: ['min_relative_relevance:0.2', 'min_relative_relevance:0.6'] }), { index }).budgets.min_relative_relevance).toBe(0.6);
    // The score-drop stop: the highest min_score_ratio wins, like the other relevance floor; the receipt says which clause lost.
    const drop = compilePolicy(base({ stop_conditions: ['min_score_ratio:0.25', 'min_score_ratio:0.75'] }), { index });
    expect(drop.budgets.min_score_ratio).toBe(0.75);
    expect(rows(drop, 'stop_condition').map((r) => [r.disposition, r.rule])).toEqual([
      ['enforced', 'structured token: min_score_ratio:0.25 (a tighter min_score_ratio from another clause wins: 0.75)'],
      ['enforced', 'structured token: min_score_ratio:0.75'],
    ]);
    expect(rows(c, 'stop_condition').map((r) => r.rule)).toEqual([
      'structured token: max_refs:5 (a tighter max_refs from another clause wins: 3)',
      'structured token: max_refs:3',
      'structured token: max_chunks:4',
      'structured token: max_chars:700',
      'structured token: min_relevance:0.5',
      'structured token: time_budget_ms:2000',
      'pattern max_refs: max_refs:4 (a tighter max_refs from another clause wins: 3)',
    ]);
  });

  it('compiles deny_prefix, deny_class and no_expand_class', () => {
    const c = compilePolicy(base({ stop_conditions: ['deny_prefix:FixtureLore:World/Politics/', 'deny_class:movements', 'no_expand_class:index'] }), { index });
    expect(c.denied_prefixes).toEqual([{ prefix: 'World/Politics/', pointer: '/stop_conditions/0' }]);
    expect(c.denied_classes).toEqual(['movements']);
    expect(c.no_expand_classes).toEqual(['index']);
    expect(rows(c, 'stop_condition').map((r) => [r.rule, r.matches])).toEqual([
      ['structured token: never consult World/Politics/', 2],
      ['structured token: never consult notes of class movements', 2],
      ['structured token: consult notes of class index but do not walk their links', 5],
    ]);
  });

  it('denies packet hidden refs, lore or not, and config hidden prefixes', () => {
    const c = compilePolicy(base(), {
      index,
      packet: { hidden_context_audit: { omitted_context_refs: ['FixtureLore:World/Pre-Elysium/Technology/Pilot Neural Lace.md', 'coordinator.rationale', 'some thing: with colon'] } },
      config: { hidden_prefixes: ['World/Technology/'] },
    });
    expect([...rows(c, 'hidden_ref'), ...rows(c, 'hidden_prefix')].map((r) => [r.pointer, r.disposition, r.matches])).toEqual([
      ['/hidden_context_audit/omitted_context_refs/0', 'enforced', 1],
      ['/hidden_context_audit/omitted_context_refs/1', 'enforced', 0],
      ['/hidden_context_audit/omitted_context_refs/2', 'advisory', null],
      ['#/config/hidden_prefixes/0', 'enforced', 2],
    ]);
    expect(rows(c, 'hidden_ref')[1]!.rule).toBe('never consult coordinator.rationale (no note or folder of FixtureLore has this path, so 0 notes are denied)');
    expect(checkPath(c, 'World/Pre-Elysium/Technology/Pilot Neural Lace.md')).toEqual({
      ok: false, reason: 'hidden_ref', detail: 'World/Pre-Elysium/Technology/Pilot Neural Lace.md is hidden (World/Pre-Elysium/Technology/Pilot Neural Lace.md, /hidden_context_audit/omitted_context_refs/0)',
    });
    expect(checkPath(c, 'World/Technology/Signal Masking.md')).toMatchObject({ ok: false, reason: 'hidden_ref' });
  });

  it('fails closed on a misspelt hidden ref: lower case, backslashes, percent-encoding, a trailing space, wikilink brackets all hide the note', () => {
    const MC = 'World/Pre-Elysium/Factions/Powers/Major/Meridian Compact.md';
    const spellings = [
      'FixtureLore:world/pre-elysium/factions/powers/major/meridian compact.md',
      'FixtureLore:World\\Pre-Elysium\\Factions\\Powers\\Major\\Meridian Compact.md',
      'FixtureLore:World/Pre-Elysium/Factions/Powers/Major/Meridian%20Compact.md',
      'FixtureLore:World/Pre-Elysium/Factions/Powers/Major/Meridian Compact.md ',
      '[[Meridian Compact]]',
    ];
    for (const ref of spellings) {
      const c = compilePolicy(base(), { index, packet: { hidden_context_audit: { omitted_context_refs: [ref] } } });
      const row = rows(c, 'hidden_ref')[0]!;
      expect([ref, row.disposition, row.matches]).toEqual([ref, 'enforced', 1]);
      expect(row.rule.startsWith(`never consult ${MC} (`)).toBe(true);
      expect(checkPath(c, MC)).toMatchObject({ ok: false, reason: 'hidden_ref' });
    }
    expect(looseHiddenMatches(index, 'FixtureLore', 'no such note')).toEqual([]);
  });

  it('never lets a config inside the vault remove the default future-era rule: its prefixes are added, a --config outside the vault replaces it, and the CLI warns naming the file', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'loretrace-vault-config-'));
    try {
      const vault = join(tmp, 'FixtureLore');
      cpSync(FIXTURE_VAULT, vault, { recursive: true });
      writeFileSync(join(vault, 'loretrace.config.json'), '{"future_era_prefixes":["Nowhere/"]}\n');
      const outside = join(tmp, 'outside.config.json');
      writeFileSync(outside, '{"future_era_prefixes":["Nowhere/"]}\n');
      const p = base({ allowed_prefixes: ['World/'], required_seed_refs: [], stop_conditions: ['stop before post-Elysium or future-outcome lore unless the packet explicitly requests it'] });
      const planted = compilePolicy(p, { index: await indexVault(vault, { persist: false }) });
      expect(checkPath(planted, 'World/Post-Elysium/Veil Drive.md')).toEqual({ ok: false, reason: 'future_era', detail: 'World/Post-Elysium/Veil Drive.md is future-era lore (World/Post-Elysium/, #/default/future_era_prefixes/0)' });
      expect(rows(planted, 'future_era_prefix').map((r) => [r.clause, r.pointer, r.rule])).toEqual([
        ['World/Post-Elysium/', '#/default/future_era_prefixes/0', 'never consult World/Post-Elysium/ (default: every Post-Elysium/ folder, names compared folded (case, accents, -, _, spaces and Unicode dashes ignored))'],
        ['Nowhere/', '#/config/future_era_prefixes/0', `never consult Nowhere/ (the vault's own config ${join(vault, 'loretrace.config.json')} future_era_prefixes: added to the default, which a config inside the vault never removes)`],
      ]);
      // A --config inside the vault is the vault's own too.
      const inside = compilePolicy(p, { index: await indexVault(vault, { persist: false, configPath: join(vault, 'loretrace.config.json') }) });
      expect(checkPath(inside, 'World/Post-Elysium/Veil Drive.md')).toMatchObject({ ok: false, reason: 'future_era' });
      // A --config outside the vault may replace the default, and the row names it.
      const replaced = compilePolicy(p, { index: await indexVault(vault, { persist: false, configPath: outside }) });
      expect(checkPath(replaced, 'World/Post-Elysium/Veil Drive.md')).toEqual({ ok: true });
      expect(rows(replaced, 'future_era_prefix').map((r) => r.rule)).toEqual([`never consult Nowhere/ (--config ${outside} future_era_prefixes, outside the vault: replaces the default)`]);
      // Every vault command warns, one line naming the file; with --config outside the vault, nothing.
      let err = '';
      const io = { stdout: () => undefined, stderr: (t: string) => void (err += t), env: { LORETRACE_INDEX_DIR: join(tmp, 'index') }, cwd: tmp };
      expect(await main(['index', '--lore', vault], io)).toBe(0);
      expect(err.split('\n').filter((l) => l.includes('future_era_prefixes'))).toEqual([
        `loretrace: warning: ${join(vault, 'loretrace.config.json')} /future_era_prefixes: a config inside the vault only adds future-era prefixes, it never replaces the default (every Post-Elysium/ folder still applies); to replace it, pass --config <file> outside the vault`,
      ]);
      err = '';
      expect(await main(['index', '--lore', vault, '--config', outside], io)).toBe(0);
      expect(err).not.toContain('future_era_prefixes');
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('takes future-era prefixes from config and waives them under an explicitly allowed prefix', () => {
    const p = base({ allowed_prefixes: ['World/Pre-Elysium/', 'World/Post-Elysium/Veil Drive.md'], stop_conditions: ['stop before future lore'] });
    const c = compilePolicy(p, { index, config: { future_era_prefixes: ['World/Post-Elysium/'] } });
    expect(rows(c, 'future_era_prefix')).toEqual([{
      clause: 'World/Post-Elysium/', kind: 'future_era_prefix', pointer: '#/config/future_era_prefixes/0', disposition: 'enforced',
      rule: 'never consult World/Post-Elysium/ (config future_era_prefixes, given by the caller: replaces the default), except under World/Post-Elysium/Veil Drive.md, which allowed_prefixes requests explicitly',
      matches: 2,
    }]);
    expect(checkPath(c, 'World/Post-Elysium/Veil Drive.md')).toEqual({ ok: true });
    expect(checkPath(c, 'World/Post-Elysium/Echo Minds.md')).toMatchObject({ ok: false, reason: 'future_era' });
  });

  it('does not deny future-era lore without a stop condition asking for it', () => {
    const c = compilePolicy(base({ allowed_prefixes: ['World/'] }), { index });
    expect(c.future_era).toEqual([]);
    expect(checkPath(c, 'World/Post-Elysium/Echo Minds.md')).toEqual({ ok: true });
  });

  it('refuses a policy with advisory or partially enforced clauses under strict', () => {
    const p = base({ stop_conditions: ['be nice', 'max_refs:4'], follow_link_classes: ['wikilink', 'vibes', 'harbor factions'] });
    expect(refusal(() => compilePolicy(p, { index, strict: true }))).toEqual({
      code: 'strict_policy',
      pointer: '/follow_link_classes/1',
      message: '--strict-policy refuses this policy: 3 clauses are not fully enforced: /follow_link_classes/1 "vibes" (advisory); /follow_link_classes/2 "harbor factions" (partially_enforced); /stop_conditions/0 "be nice" (advisory)',
    });
    expect(compilePolicy(base({ stop_conditions: ['max_refs:4'], follow_link_classes: ['wikilink', 'factions'] }), { index, strict: true }).receipt_totals).toEqual({ enforced: 9, partially_enforced: 0, advisory: 0 });
  });

  it('names what a plain-English stop condition leaves unenforced: an exception, a named topic, a restriction', () => {
    const p = base({
      allowed_prefixes: ['World/'],
      stop_conditions: [
        'stop after 12 notes unless the scene needs more',
        "stop when a link is not relevant to Nara's labor grievances",
        'never follow future lore about Jovian colonies only',
      ],
    });
    const c = compilePolicy(p, { index });
    expect(rows(c, 'stop_condition').map((r) => [r.pointer, r.disposition, r.rule, r.matches])).toEqual([
      ['/stop_conditions/0', 'partially_enforced', 'pattern max_refs: max_refs:12; not enforced: "unless the scene needs more" (the rule applies in every case; loretrace does not evaluate the exception)', null],
      ['/stop_conditions/1', 'partially_enforced', "pattern not_relevant: min_relevance:0.3; not enforced: nara, labor, grievances (relevance is measured against the walk's queries, not against these words)", null],
      ['/stop_conditions/2', 'partially_enforced', 'pattern future_era: deny future-era prefixes World/Post-Elysium/; not enforced: jovian, colonies, only (the rule applies whatever these words say)', 3],
    ]);
    expect(c.budgets.max_refs).toBe(12);
    expect(checkPath(c, 'World/Post-Elysium/Echo Minds.md')).toMatchObject({ ok: false, reason: 'future_era' });
    expect(refusal(() => compilePolicy(p, { index, strict: true }))).toEqual({
      code: 'strict_policy',
      pointer: '/stop_conditions/0',
      message: '--strict-policy refuses this policy: 3 clauses are not fully enforced: /stop_conditions/0 "stop after 12 notes unless the scene needs more" (partially_enforced); /stop_conditions/1 "stop when a link is not relevant to Nara\'s labor grievances" (partially_enforced); /stop_conditions/2 "never follow future lore about Jovian colonies only" (partially_enforced)',
    });
  });

  it('keeps a plain-English stop condition enforced when its patterns account for every word', () => {
    const p = base({
      allowed_prefixes: ['World/'],
      stop_conditions: [
        "stop when a link is not relevant to the responder's local action, institution, relationship, or material stakes",
        'stop before post-Elysium or future-outcome lore unless the packet explicitly requests it',
        'stop after 4 notes',
        'no more than 3 excerpts',
      ],
    });
    const c = compilePolicy(p, { index, strict: true });
    expect(rows(c, 'stop_condition').map((r) => [r.disposition, r.rule])).toEqual([
      ['enforced', 'pattern not_relevant: min_relevance:0.3'],
      ['enforced', 'pattern future_era: deny future-era prefixes World/Post-Elysium/'],
      ['enforced', 'pattern max_refs: max_refs:4'],
      ['enforced', 'pattern max_chunks: max_chunks:3'],
    ]);
    // Only the exception the future-era rule implements (an allowed prefix inside the era) is accounted for.
    const other = compilePolicy(base({ allowed_prefixes: ['World/'], stop_conditions: ['stop before post-Elysium lore except when the scene asks for it'] }), { index });
    expect(rows(other, 'stop_condition').map((r) => [r.disposition, r.rule])).toEqual([
      ['partially_enforced', 'pattern future_era: deny future-era prefixes World/Post-Elysium/; not enforced: "except when the scene asks for it" (the rule applies in every case; loretrace does not evaluate the exception)'],
    ]);
  });

  it('turns allowed_scope entries into start points, advisory when not a usable note', () => {
    const c = compilePolicy(base(), {
      index,
      packet: { lore_access: { allowed_scope: ['FixtureLore:World/Politics/Salvage Law.md', 'Packet-local excerpts only', 'World/Post-Elysium/Veil Drive.md', 'World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md'] } },
    });
    expect(c.scope).toEqual(['World/Politics/Salvage Law.md']);
    expect(rows(c, 'allowed_scope').map((r) => [r.disposition, r.rule])).toEqual([
      ['enforced', 'start point World/Politics/Salvage Law.md at depth 0, consulted best-first within the budgets'],
      ['advisory', 'no note Packet-local excerpts only in FixtureLore; not a start point'],
      ['advisory', 'not a start point: World/Post-Elysium/Veil Drive.md is outside allowed_prefixes (World/Politics/, World/Pre-Elysium/, World/Technology/)'],
      ['enforced', 'start point World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md (already a seed or listed earlier)'],
    ]);
  });
});

describe('parsePolicyDocument', () => {
  it('refuses a policy file that is not JSON, naming the file', () => {
    const r = refusal(() => parsePolicyDocument('{ max_link_depth: 2 ', 'broken.policy.json', 'policy'));
    expect(r.code).toBe('bad_json');
    expect(r.message).toMatch(/^broken\.policy\.json is not JSON: /);
  });

  it('takes a packet policy with its pointer', () => {
    const doc = parsePolicyDocument(JSON.stringify({ lore_access: { traversal_policy: base() } }), 'p.json', 'packet');
    expect(doc.pointer).toBe('/lore_access/traversal_policy');
    expect(doc.policy.max_link_depth).toBe(2);
  });

  it('refuses a packet without a traversal_policy', () => {
    expect(refusal(() => parsePolicyDocument('{"lore_access":{}}', 'p.json', 'packet'))).toEqual({
      code: 'bad_policy', pointer: '/lore_access/traversal_policy', message: 'p.json has no /lore_access/traversal_policy to apply',
    });
  });
});

describe('parseStopCondition', () => {
  it.each([
    ['stop when a link is not relevant to the scene', ['not_relevant']],
    ['Stop before post-Elysium lore', ['future_era']],
    ['avoid future-outcome spoilers', ['future_era', 'hidden']],
    ['never read author-only notes', ['hidden']],
    ['stop after 12 documents', ['max_refs']],
    ['no more than 3 excerpts', ['max_chunks']],
    ['at most 2000 characters', ['max_chars']],
  ])('recognises %j', (clause, patterns) => {
    const p = parseStopCondition(clause);
    expect(p.form).toBe('english');
    expect(p.form === 'english' && p.patterns).toEqual(patterns);
    expect(p.form === 'english' && [p.dropped, p.exceptions]).toEqual([[], []]);
  });

  it.each([
    ['stop after 12 notes unless the scene needs more', [], ['unless the scene needs more']],
    ["stop when a link is not relevant to Nara's labor grievances", ['nara', 'labor', 'grievances'], []],
    ['never follow future lore about Jovian colonies only', ['jovian', 'colonies', 'only'], []],
    ['stop before hidden harbor lore except the berth logs; at most 5 notes', ['harbor'], ['except the berth logs']],
  ])('names the words and exceptions of %j its patterns do not account for', (clause, dropped, exceptions) => {
    const p = parseStopCondition(clause);
    expect(p.form === 'english' && { dropped: p.dropped, exceptions: p.exceptions }).toEqual({ dropped, exceptions });
  });

  it('leaves the answer-shaping clause unrecognised', () => {
    expect(parseStopCondition('summarize only the constraints that affected the response; do not dump research into dialogue')).toEqual({ form: 'unrecognised', effects: [] });
  });

  it('reads a deny_prefix token whose path has spaces', () => {
    expect(parseStopCondition('deny_prefix:World/Pre-Elysium/Author Notes/')).toEqual({ form: 'token', effects: [{ kind: 'deny_prefix', value: 'World/Pre-Elysium/Author Notes/' }] });
  });
});

describe('mapLinkClassPhrase', () => {
  it('maps each word through the synonym table, possessives and plurals folded', () => {
    expect(mapLinkClassPhrase("referenced social movements shaping a visible faction's values", new Set(['factions', 'movements']))).toEqual({
      words: [{ word: 'movements', classes: ['movements'], via: 'synonym' }, { word: 'faction', classes: ['factions'], via: 'synonym' }],
      classes: ['factions', 'movements'],
    });
  });
});

describe('checkPath', () => {
  let c: CompiledPolicy;
  beforeAll(() => {
    c = compilePolicy(base({ stop_conditions: ['stop before post-Elysium lore', 'deny_prefix:World/Technology/', 'deny_class:movements'] }), { index });
  });

  it.each([
    ['World/Pre-Elysium/Territories.md', { ok: true }],
    ['World/Nowhere.md', { ok: false, reason: 'not_found', detail: 'no note World/Nowhere.md in this snapshot' }],
    ['World/Pre-Elysium/Author Notes/Brinefall Truth.md', { ok: false, reason: 'hidden_ref', detail: 'World/Pre-Elysium/Author Notes/Brinefall Truth.md is hidden (World/Pre-Elysium/Author Notes/Brinefall Truth.md, #/frontmatter/World~1Pre-Elysium~1Author Notes~1Brinefall Truth.md/visibility)' }],
    ['World/Post-Elysium/Veil Drive.md', { ok: false, reason: 'future_era', detail: 'World/Post-Elysium/Veil Drive.md is future-era lore (World/Post-Elysium/, #/default/future_era_prefixes/0)' }],
    ['World/Pre-Elysium-Extra/Dockside Rumors.md', { ok: false, reason: 'prefix_denied', detail: 'World/Pre-Elysium-Extra/Dockside Rumors.md is outside allowed_prefixes (World/Politics/, World/Pre-Elysium/, World/Technology/)' }],
    ['World/Technology/Signal Masking.md', { ok: false, reason: 'prefix_denied', detail: 'World/Technology/Signal Masking.md is under denied prefix World/Technology/ (/stop_conditions/1)' }],
    ['World/Pre-Elysium/Factions/Movements/Quiet Hands.md', { ok: false, reason: 'class_not_allowed', detail: 'World/Pre-Elysium/Factions/Movements/Quiet Hands.md has denied class movements (deny_class)' }],
  ])('%s → %j', (path, expected) => {
    expect(checkPath(c, path)).toEqual(expected);
  });
});

describe('checkEdge', () => {
  it('refuses an unresolved link', () => {
    const c = compilePolicy(base(), { index });
    expect(checkEdge(c, link(MC, '[[Drowned Archive]]'), 0)).toEqual({
      ok: false, reason: 'unresolved', detail: `unresolved link [[Drowned Archive]] at ${MC}:22 leads to no note`,
    });
  });

  it('refuses an edge past max_link_depth', () => {
    const c = compilePolicy(base({ max_link_depth: 1 }), { index });
    expect(checkEdge(c, link(MC, '[[Quiet Hands]]'), 0)).toEqual({ ok: true });
    expect(checkEdge(c, link(MC, '[[Quiet Hands]]'), 1)).toEqual({ ok: false, reason: 'depth_exceeded', detail: 'depth 2 > max_link_depth 1' });
  });

  it('follows an edge matching any listed class and refuses the rest', () => {
    const c = compilePolicy(base({ follow_link_classes: ['field', 'technology'] }), { index });
    expect(checkEdge(c, link(MC, '[[Halcyon Mutual]]'), 0)).toEqual({ ok: true });
    expect(checkEdge(c, link(MC, '![[Heat Sink Lattice]]'), 0)).toEqual({ ok: true });
    expect(checkEdge(c, link(MC, '[[Quiet Hands]]'), 0)).toEqual({
      ok: false, reason: 'class_not_allowed', detail: 'wikilink/prose link into classes [factions, movements, pre-elysium, world] matches no follow_link_classes entry',
    });
  });

  it('walks a backlink only when backlink is listed', () => {
    const l = link(MC, '[[Quiet Hands]]');
    expect(checkEdge(compilePolicy(base(), { index }), l, 0, 'inbound')).toEqual({ ok: false, reason: 'class_not_allowed', detail: 'backlink is not in follow_link_classes' });
    expect(checkEdge(compilePolicy(base({ follow_link_classes: ['backlink'] }), { index }), l, 0, 'inbound')).toEqual({ ok: true });
  });

  it('applies the path rules to the target', () => {
    const c = compilePolicy(base({ stop_conditions: ['stop before post-Elysium lore'] }), { index });
    expect(checkEdge(c, link(MC, '[[Veil Drive]]'), 0)).toMatchObject({ ok: false, reason: 'future_era' });
    expect(checkEdge(c, link(MC, '[[Brinefall Truth]]'), 0)).toMatchObject({ ok: false, reason: 'hidden_ref' });
    expect(checkEdge(c, link(MC, '[[Dockside Rumors]]'), 0)).toMatchObject({ ok: false, reason: 'prefix_denied' });
  });
});

describe.skipIf(!hasShared)(`compilePolicy on the real Sella packet (${hasShared ? 'shared data present' : sharedNotice})`, () => {
  let real: VaultIndex;
  beforeAll(async () => {
    real = await indexVault(AETHERIA, { indexDir: mkdtempSync(join(tmpdir(), 'loretrace-d-policy-aetheria-')) });
  }, 120_000);

  it('maps every link-class phrase but names the qualifiers it does not enforce; the fourth stop condition is advisory', () => {
    const packet = JSON.parse(readFileSync(SELLA, 'utf8'));
    const c = compilePolicy(packet.lore_access.traversal_policy, { index: real, packet });
    const unenforced = (words: string) => `; not enforced: ${words} (every note of these classes is followed, whatever it says)`;
    expect(rows(c, 'follow_link_class').map((r) => [r.disposition, r.rule, r.matches])).toEqual([
      ['partially_enforced', `maps to target classes factions (factions→factions, institutions→factions); follow links into notes of these classes${unenforced('resident, jovian')}`, 64],
      ['partially_enforced', `maps to target classes factions (factions→factions); follow links into notes of these classes${unenforced('direct, scene, pressure')}`, 64],
      ['partially_enforced', `maps to target classes factions, movements (movements→movements, faction→factions); follow links into notes of these classes${unenforced('social, shaping, visible, values')}`, 64],
      ['partially_enforced', `maps to target classes politics, technology, territories (territory→territories, politics→politics, technology→technology); follow links into notes of these classes; no note has class territories${unenforced('explain, material, constraints')}`, 31],
      ['partially_enforced', `maps to target classes events (event→events, precedent→events); follow links into notes of these classes${unenforced('explain, local, institutional, obligation')}`, 24],
    ]);
    expect(rows(c, 'stop_condition').map((r) => [r.pointer, r.disposition])).toEqual([
      ['/lore_access/traversal_policy/stop_conditions/0', 'enforced'],
      ['/lore_access/traversal_policy/stop_conditions/1', 'enforced'],
      ['/lore_access/traversal_policy/stop_conditions/2', 'enforced'],
      ['/lore_access/traversal_policy/stop_conditions/3', 'advisory'],
    ]);
    expect(rows(c, 'allowed_prefix').map((r) => r.matches)).toEqual([117, 5, 0]);
    expect(rows(c, 'future_era_prefix').map((r) => [r.clause, r.matches])).toEqual([['Aetheria/Worldbuilding/Post-Elysium/', 17]]);
    expect(rows(c, 'hidden_ref').map((r) => [r.clause, r.disposition, r.matches])).toEqual([
      ['maer_tidecall.canonical_private_state', 'enforced', 0],
      ['coordinator_artifact.coordinator_decision.rationale', 'enforced', 0],
      ['author_only.packet_personhood_resolution', 'enforced', 0],
      ['future_branch_plans', 'enforced', 0],
    ]);
    expect(c.receipt_totals).toEqual({ enforced: 32, partially_enforced: 5, advisory: 1 });
    const strict = refusal(() => compilePolicy(packet.lore_access.traversal_policy, { index: real, packet, strict: true }));
    expect([strict.code, strict.pointer]).toEqual(['strict_policy', '/lore_access/traversal_policy/follow_link_classes/0']);
    expect(strict.message).toBe(
      '--strict-policy refuses this policy: 6 clauses are not fully enforced: ' +
        '/lore_access/traversal_policy/follow_link_classes/0 "resident Jovian factions and institutions" (partially_enforced); ' +
        '/lore_access/traversal_policy/follow_link_classes/1 "referenced factions with direct scene pressure" (partially_enforced); ' +
        '/lore_access/traversal_policy/follow_link_classes/2 "referenced social movements shaping a visible faction\'s values" (partially_enforced); ' +
        '/lore_access/traversal_policy/follow_link_classes/3 "territory, politics, and technology docs that explain material constraints" (partially_enforced); ' +
        '/lore_access/traversal_policy/follow_link_classes/4 "event docs that explain local precedent or institutional obligation" (partially_enforced); ' +
        '/lore_access/traversal_policy/stop_conditions/3 "summarize only the constraints that affected the response; do not dump research into dialogue" (advisory)',
    );
  }, 60_000);
});
