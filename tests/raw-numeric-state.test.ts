/**
 * Raw numeric state in a packet prompt (seed 001: no "raw dimension scores"; the packets' own rule "Do not
 * include raw personality variables or numeric state scores"): the forms `rawNumericStateIn`
 * (src/contracts/rules.ts) reads as state, the ones it leaves alone, the validator's error on a packet, and —
 * on the real AetheriaLore vault and Ghostlight packets in ../shared (skipped with a notice when absent) —
 * exactly which lines read as state.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rawNumericStateIn } from '../src/contracts/rules.js';
import { validatePacket } from '../src/contracts/validate.js';
import type { ResponderPacket } from '../src/contracts/types.js';
import { AETHERIA, GHOSTLIGHT, hasShared, REPO, sharedNotice } from './helpers/shared.js';

const matches = (text: string): string[] => rawNumericStateIn(text).map((m) => m.text);

describe('rawNumericStateIn', () => {
  it.each([
    ['Your fear 0.82 shows.', ['fear 0.82']],
    ['fear=0.82', ['fear=0.82']],
    ['fear = 0.82', ['fear = 0.82']],
    ['Fear 0.8', ['Fear 0.8']],
    ['trust dimension 0.77', ['trust dimension 0.77']],
    ['trust dimension score: 0.77', ['trust dimension score: 0.77']],
    ['Trust: .7', ['Trust: .7']],
    ['fear 1.0', ['fear 1.0']],
    ['fear is 0.82, trust was 0.4', ['fear is 0.82', 'trust was 0.4']],
    ['trust at 0.77', ['trust at 0.77']],
    ['fear (0.82)', ['fear (0.82']],
    ['fear\u00a00.82', ['fear\u00a00.82']],
    ['trust: 77%', ['trust: 77%']],
    ['trust:77%', ['trust:77%']],
    ['fear=100%', ['fear=100%']],
    ['trust level 77 %', ['trust level 77 %']],
    ['trust: 77 percent', ['trust: 77 percent']],
    ['loyalty: 7/10', ['loyalty: 7/10']],
    ['Loyalty: 7/10.', ['Loyalty: 7/10']],
    ['fear: 82/100', ['fear: 82/100']],
    ['Mara fear 0.82; Idris trust: 40%.', ['fear 0.82', 'trust: 40%']],
    ['fear is at 82%', ['fear is at 82%']],
    ['Trust was at 40 percent.', ['Trust was at 40 percent']],
    ['fear — 0.82', ['fear — 0.82']],
    ['fear – 0.82', ['fear – 0.82']],
    ['fear - 0.82', ['fear - 0.82']],
    ['fear, 0.82', ['fear, 0.82']],
    ['fear 82/100', ['fear 82/100']],
    ['stress 3/5', ['stress 3/5']],
    ['Mara: stress 3/5.', ['stress 3/5']],
    ['fear is 7/10', ['fear is 7/10']],
    // One report per occurrence, though two forms read it.
    ['loyalty 7/10', ['loyalty 7/10']],
  ])('reads %j as raw numeric state', (text, found) => {
    expect(matches(text)).toEqual(found);
  });

  it.each([
    'loretrace v0.1 and schema 0.1.2',
    'version 0.5',
    'fear 1',
    'fear 0.82x',
    'fear 0.82.1',
    'a crew of 40',
    'The reactors achieved 85% efficiency.',
    'exhaust velocities toward 10% of lightspeed',
    'trust: 150%',
    'fear: 24/7',
    'score: 7/10.5',
    'the ratio 0.5',
    'Fear is rising.',
    // Prose numbers: times, counts, dates, places, spans, and a percentage of something.
    'The shift bell rings at 14:30.',
    '3 of 5 workers walked out.',
    'Filed 3/5/2893 at the harbor office.',
    'No intake since 3/5.',
    'Deck 4, berth 12.',
    'shift 12/5',
    'The Compact held 9/11 routes.',
    'In the strike, 40% of crews walked out.',
    'The reactors operated at 30% efficiency.',
    'She is at 40% capacity.',
    'Pallas - 2719',
    'cabins 1 to 5',
  ])('leaves %j alone', (text) => {
    expect(matches(text)).toEqual([]);
  });

  it('gives offsets into the text, in text order', () => {
    expect(rawNumericStateIn('trust: 77% then fear 0.82')).toEqual([
      { at: 0, text: 'trust: 77%' },
      { at: 16, text: 'fear 0.82' },
    ]);
  });
});

describe('prompt.raw_numeric_state on a packet', () => {
  it('reports each form of the same scores, one error each, naming the text and its character (errors sorted by message)', () => {
    const packet = JSON.parse(readFileSync(join(REPO, 'tests', 'fixtures', 'validate', 'packet-only.packet.json'), 'utf8')) as ResponderPacket;
    const base = packet.packet_prompt_text.length;
    packet.packet_prompt_text += '\nMara: fear=0.82, trust: 77%, Fear 0.8.';
    const errors = validatePacket(packet).errors.filter((e) => e.rule === 'prompt.raw_numeric_state');
    expect(errors.map((e) => [e.pointer, e.message])).toEqual([
      ['/packet_prompt_text', `packet_prompt_text exposes raw numeric state "Fear 0.8" at character ${base + 30}`],
      ['/packet_prompt_text', `packet_prompt_text exposes raw numeric state "fear=0.82" at character ${base + 7}`],
      ['/packet_prompt_text', `packet_prompt_text exposes raw numeric state "trust: 77%" at character ${base + 18}`],
    ]);
  });
});

/** Every file under `dir` whose name ends in `ext`, in code-unit order. */
function filesUnder(dir: string, ext: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith(ext))
    .sort()
    .map((f) => join(dir, f));
}

describe.skipIf(!hasShared)(`real data (${hasShared ? 'shared data present' : sharedNotice})`, () => {
  it('finds no raw numeric state in the real Ghostlight packet prompts', () => {
    for (const f of filesUnder(join(GHOSTLIGHT, 'packets'), '.json')) {
      const packet = JSON.parse(readFileSync(f, 'utf8')) as ResponderPacket;
      expect({ f, found: matches(packet.packet_prompt_text) }).toEqual({ f, found: [] });
    }
  });

  it('reads no AetheriaLore line as state: its percentages are lore ("achieved 85% efficiency", "operated at 30% efficiency", "cognition (70% restriction)")', () => {
    const found: string[] = [];
    for (const f of filesUnder(AETHERIA, '.md')) {
      readFileSync(f, 'utf8').split('\n').forEach((line, i) => {
        for (const m of matches(line)) found.push(`${relative(AETHERIA, f)}:${i + 1} ${m}`);
      });
    }
    expect(found).toEqual([]);
    // The lines those percentages stand on are there to be left alone (a renamed note would make this vacuous).
    const fusion = readFileSync(join(AETHERIA, 'Aetheria', 'Worldbuilding', 'Pre-Elysium', 'Technology', 'Fusion.md'), 'utf8');
    expect([fusion.includes('achieved 85% efficiency'), fusion.includes('operated at 30% efficiency')]).toEqual([true, true]);
  });
});
