/**
 * What an excerpt may quote (src/excerpts/lines.ts): lore lines only — never an epigraph, a tagline, a
 * heading, a list of links, bare URLs and tags, or a "See also" navigation line — and excerpts that stand
 * alone: a compact excerpt opening with a word that points back ("They …", "Its …", "Second, …") is
 * extended back over its antecedent sentence or another sentence is picked (src/excerpts/compact.ts).
 * Fixture: lore-fixtures/ExcerptLore/Tidewater Guild.md.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compactExcerpt } from '../src/excerpts/compact.js';
import { pickExcerptLines } from '../src/excerpts/excerpt.js';
import { excerptLineKind, opensWithReference } from '../src/excerpts/lines.js';
import { FIXTURES } from './helpers/shared.js';

const NOTE = readFileSync(join(FIXTURES, 'ExcerptLore', 'Tidewater Guild.md'), 'utf8');
const lines = NOTE.replace(/\n$/, '').split('\n');
const line = (n: number): string => lines[n - 1] as string;

describe('excerptLineKind on the fixture note', () => {
  it('classes taglines, navigation lines, link lists and bare URL/tag lines as non-lore', () => {
    expect(lines.map((l, i) => `${i + 1} ${excerptLineKind(l)}`).filter((s) => !/ (blank|heading)$/.test(s))).toEqual([
      '3 epigraph',
      '5 content',
      '7 content',
      '11 content',
      '13 content',
      '14 list_item',
      '15 list_item',
      '19 navigation',
      '20 link_list',
      '21 link_list',
      '22 navigation',
    ]);
  });
  it('takes a navigation cue only at the start, and a label cue only with its colon', () => {
    expect(excerptLineKind('Next the convoy moved on to the outer locks.')).toBe('content');
    expect(excerptLineKind('Next: [[Quiet Hands]]')).toBe('navigation');
    expect(excerptLineKind('- See also [[Quiet Hands]] for the care rota.')).toBe('navigation');
    expect(excerptLineKind('Seed vaults hold grain for the harbors.')).toBe('content');
    expect(excerptLineKind('The board lists https://example.org/tides for every crew that sails.')).toBe('content');
  });
});

describe('opensWithReference', () => {
  it('flags pronoun- and connective-initial sentences, not definite descriptions or existentials', () => {
    const cases = ['They hold the keys.', 'Its ledgers record.', 'Second, the gates close.', 'Instead the action spread.', 'Even the guild pays.', '*This* tide', 'The guild settles.', 'There are three steps.', 'Itself a ruin.', 'Thesis one.'];
    expect(cases.filter(opensWithReference)).toEqual(['They hold the keys.', 'Its ledgers record.', 'Second, the gates close.', 'Instead the action spread.', 'Even the guild pays.', '*This* tide']);
  });  it('flags an enumeration ordinal only with its comma, and a preposition whose object is a demonstrative', () => {
    const cases = [
      'First, a keeper hears both crews.', 'Firstly the guild pays.', 'Last, the docks close.', 'Second, the gates close.',
      'First contact came in 2700.', 'Second Compact War began.', 'Last year the docks closed.',
      'During this period, three factions emerged.', 'In this way, fusion power spread.', 'At this point the guild votes.', 'Because of that split focus, the movement aligns.', 'To this end, the guild votes.', 'In these rare cases, gravity helps.',
      'In 2700 the Compact formed.', 'Within the Compact, rules hold.', 'For thirty years the gates held.',
    ];
    expect(cases.filter(opensWithReference)).toEqual([
      'First, a keeper hears both crews.', 'Firstly the guild pays.', 'Last, the docks close.', 'Second, the gates close.',
      'During this period, three factions emerged.', 'In this way, fusion power spread.', 'At this point the guild votes.', 'Because of that split focus, the movement aligns.', 'To this end, the guild votes.', 'In these rare cases, gravity helps.',
    ]);
  });
  it('flags "The" and a shell noun with nothing after it to fill it, not one with its own post-modifier, a content clause or a name', () => {
    const cases = [
      'The answer was a shared shell.', 'The result is a world of ledgers.', 'The results were poor.', 'The distinction matters because the market denies it.', 'The goal is not profit but command.', 'The question is never just what a device can do.',
      'The answer to the drift was a shared shell.', 'The lesson of the era is simple.', 'The argument over biology is moral.', 'The question is whether the gates hold.', 'The problem was that the tide turned.', 'The problem: the tide.',
      'The Answer Engine runs the docks.', 'The guild settles.', 'The movement grew.', 'The effectors hum.',
    ];
    expect(cases.filter(opensWithReference)).toEqual([
      'The answer was a shared shell.', 'The result is a world of ledgers.', 'The results were poor.', 'The distinction matters because the market denies it.', 'The goal is not profit but command.', 'The question is never just what a device can do.',
    ]);
  });
  it('takes "It" in an extraposition or cleft as no reference, any other "It" as one', () => {
    const cases = ['It is said that the Veil sings.', 'It is widely believed that the gates hold.', 'It was here that the guild formed.', 'It is unclear whether the docks reopen.', 'It is a port that handles grain.', 'It was built to last.', 'It holds the keys.'];
    expect(cases.filter(opensWithReference)).toEqual(['It is a port that handles grain.', 'It was built to last.', 'It holds the keys.']);
  });
});

describe('compactExcerpt: self-contained picks', () => {
  it('extends a pronoun-initial sentence back over its antecedent in the same paragraph', () => {
    const pick = compactExcerpt(lines, ['keys to the tide gates and convoy consent']);
    expect(pick).toMatchObject({ line_start: 5, line_end: 5, exact: line(5), text: line(5), self_contained: true, terms_matched: 5 });
  });
  it('picks another sentence when the antecedent is not in the paragraph ("Its ledgers …" opens its paragraph), extending "First, …" back over its lead-in', () => {
    const pick = compactExcerpt(lines, ['ledgers of berth and rescue']);
    expect(pick).toMatchObject({
      line_start: 11,
      line_end: 11,
      text: 'The guild settles quarrels in three steps. First, a keeper of the gate in question hears both crews at the lock itself and writes down what each one says the other owes, berth by berth and hour by hour.',
      self_contained: true,
      terms_matched: 1,
    });
    // Too narrow for the lead-in: "First, …" alone is not self-contained, so the best window overall is taken, flagged.
    expect(compactExcerpt(lines, ['ledgers of berth and rescue'], { maxChars: 180 })).toMatchObject({ line_start: 7, line_end: 7, text: 'Its ledgers record every berth rented and every rescue owed.', terms_matched: 3, self_contained: false });
  });
  it('extends "Second, …" back over its "First, …" and their lead-in when that fits, else returns it flagged not self-contained', () => {
    const wide = compactExcerpt(lines, ['tide gates close to crews until the debt']);
    expect(wide?.text).toBe(
      'The guild settles quarrels in three steps. First, a keeper of the gate in question hears both crews at the lock itself and writes down what each one says the other owes, berth by berth and hour by hour. Second, the tide gates close to both crews until the debt is paid.',
    );
    expect(wide?.self_contained).toBe(true);
    const narrow = compactExcerpt(lines, ['tide gates close to crews until the debt'], { maxChars: 120 });
    expect(narrow).toMatchObject({ line_start: 11, line_end: 11, text: 'Second, the tide gates close to both crews until the debt is paid.', self_contained: false });
  });
  it('extends "The answer was …" back over the question it answers', () => {
    const para = ['The harbor faced a hard question: who pays to dredge the channel? The answer was a shared levy on every berth.'];
    expect(compactExcerpt(para, ['shared levy on every berth'])).toMatchObject({ text: para[0], self_contained: true, terms_matched: 4 });
    expect(compactExcerpt(para, ['shared levy on every berth'], { maxChars: 60 })).toMatchObject({ text: 'The answer was a shared levy on every berth.', self_contained: false });
  });
  it('never ends on a lead-in that ends with a colon when it can help it', () => {
    expect(compactExcerpt(['Guild dues are paid in:', '- berth hours'], ['guild dues paid'])).toMatchObject({ text: 'Guild dues are paid in:', self_contained: false });
  });
  it('takes the lead from the first self-contained sentence, skipping the tagline', () => {
    expect(compactExcerpt(lines, ['nothing matches here'], { maxChars: 80 })).toMatchObject({
      line_start: 5,
      line_end: 5,
      text: 'The Tidewater Guild is a union of lock keepers on the Brinefall shelf.',
      terms_matched: 0,
      self_contained: true,
    });
  });
  it('gives nothing for a section of navigation lines, link lists and URL/tag lines', () => {
    expect(compactExcerpt(lines.slice(16), ['public tide board guild meridian'], { lineOffset: 17 })).toBeNull();
  });
});

describe('pickExcerptLines: lore lines only', () => {
  it('never starts or ends a run on a navigation, link-list or URL/tag line', () => {
    expect(pickExcerptLines(lines.slice(16), ['public tide board guild meridian'], 400, { lineOffset: 17 })).toBeNull();
    expect(pickExcerptLines(lines, ['public tide board gates'], 400)).toMatchObject({ line_start: 5, line_end: 5, terms_matched: 2 });
  });
});

describe('pickExcerptLines: self-contained runs (the compact excerpts\' rule, whole lines)', () => {
  const note = [
    'The Tide Guild keeps the harbor gates and the public tide board.',
    'They close the gates when the board shows a storm surge.',
    '',
    'Its ledgers are open to any captain.',
    '',
    'The guild charges for berths by:',
    '- the hour of mooring',
  ];
  it('extends a run whose first line points back ("They …") over the line before it, when that fits', () => {
    expect(pickExcerptLines(note, ['close gates storm surge'], 200)).toEqual({
      line_start: 1,
      line_end: 2,
      text: `${note[0]}\n${note[1]}`,
      chars: 121,
      terms_matched: 4,
      hits: 5,
    });
  });
  it('takes another run when the extension does not fit, and never ends on a lead-in line', () => {
    // 'They close …' alone (56 characters) is not self-contained and the extension (121) does not fit in 80:
    // the self-contained first line (gates) wins over the line with more terms.
    expect(pickExcerptLines(note, ['close gates storm surge'], 80)).toMatchObject({ line_start: 1, line_end: 1, terms_matched: 1 });
    // "Its ledgers …" opens its paragraph: no antecedent within the limit, so the guild's lead line is taken.
    expect(pickExcerptLines(note, ['ledgers captain harbor'], 64)).toMatchObject({ line_start: 1, line_end: 1, terms_matched: 1 });
    // "… berths by:" is a lead-in: the run takes the list item it introduces.
    expect(pickExcerptLines(note, ['charges berths mooring'], 200)).toMatchObject({ line_start: 6, line_end: 7, terms_matched: 3 });
  });
});
