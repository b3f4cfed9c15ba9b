/**
 * Hostile spellings against the validator's prompt rules and duplicate excerpt ref_ids: `validate` and
 * `retrieve` (buildPacket) must judge hidden text alike (one comparison, hiddenTextForm in src/contracts/rules.ts),
 * and the offsets the validator reports must point into the original prompt.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validatePacket } from '../src/contracts/validate.js';
import { hiddenTextForm, hiddenTextIn, hiddenTextSearch, packetRules } from '../src/contracts/rules.js';
import * as build from '../src/packet/build.js';
import { GHOSTLIGHT, hasShared, REPO, sharedNotice } from './helpers/shared.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const OWN_PACKET = join(REPO, 'tests', 'fixtures', 'validate', 'packet-only.packet.json');
const readJson = (p: string): Doc => JSON.parse(readFileSync(p, 'utf8')) as Doc;

/** The own packet fixture with `extra` appended to its prompt and `omitted` as its omitted refs. */
function packetWith(extra: string, omitted?: string[]): Doc {
  const d = readJson(OWN_PACKET);
  d.packet_prompt_text += extra;
  if (omitted) d.hidden_context_audit.omitted_context_refs = omitted;
  return d;
}

describe('hiddenTextSearch', () => {
  it('gives the offset of the match in the original text for every odd spelling', () => {
    const cases: [string, string, number][] = [
      ['abc Brinefall\u00a0Truth', 'brinefall truth', 4],
      ['ab\u200b\u200bBrinefall  \n Truth', 'brinefall truth', 4],
      ['x\r\n\uff22\uff32\uff29\uff2e\uff25\uff26\uff21\uff2c\uff2c\u3000\uff34\uff32\uff35\uff34\uff28', 'brinefall truth', 3],
      ['\u0130\u0130 raw numeric state', 'raw numeric state', 3],
      ['caf\u00e9 Cafe\u0301 Noir', 'café noir', 5],
      ['no match here', 'brinefall truth', -1],
    ];
    expect(cases.map(([text, needle]) => hiddenTextSearch(text).find(needle))).toEqual(cases.map((c) => c[2]));
  });

  it('falls back to bisection where the segment map differs from the whole-text form (Greek final sigma)', () => {
    // 'ΟΔΟΣ' lower-cases to 'οδος' (final ς) as a word but to 'σ' alone, so the map is not used.
    const text = 'see \u039f\u0394\u039f\u03a3 there';
    expect(hiddenTextForm(text)).toBe('see \u03bf\u03b4\u03bf\u03c2 there');
    expect(hiddenTextSearch(text).find('\u03bf\u03b4\u03bf\u03c2')).toBe(4);
  });

  it('never finds the empty needle', () => {
    expect(hiddenTextSearch('anything').find('')).toBe(-1);
  });
});

describe('hiddenTextIn', () => {
  it('is the function build.ts exports (one comparison for validate and retrieve)', () => {
    expect(build.hiddenTextIn).toBe(hiddenTextIn);
    expect(build.hiddenTextForm).toBe(hiddenTextForm);
  });
});

describe('validatePacket', () => {
  it('reports an omitted ref spelled with no-break spaces at its offset in the original prompt', () => {
    const d = packetWith('\nSee the Sealed\u00a0Harbor\u00a0Ledger.', ['sealed harbor ledger']);
    const at = (d.packet_prompt_text as string).indexOf('Sealed\u00a0Harbor');
    expect(validatePacket(d, { file: 'p.json' }).errors).toEqual([
      {
        rule: 'prompt.hidden_ref',
        pointer: '/packet_prompt_text',
        message: `packet_prompt_text contains omitted ref /hidden_context_audit/omitted_context_refs/0 "sealed harbor ledger" at character ${at}`,
        expected: 'no hidden_context_audit.omitted_context_refs entry in the prompt',
      },
    ]);
  });

  it('reports a raw-state marker split by a line break and one in fullwidth letters, each at its own offset', () => {
    const d = packetWith('\nraw\nstate variable; \uff30\uff4c\uff41\uff53\uff54\uff49\uff43\uff49\uff54\uff59');
    const p = d.packet_prompt_text as string;
    const tail = ' (expected no raw-state markers (current_activation, plasticity, canonical_state, raw state variable, raw numeric state, dimension score))';
    expect(validatePacket(d).errors.map((e) => `${e.rule}: ${e.message} (expected ${e.expected})`)).toEqual([
      `prompt.raw_state_marker: packet_prompt_text exposes raw-state marker "plasticity" at character ${p.indexOf('\uff30')}${tail}`,
      `prompt.raw_state_marker: packet_prompt_text exposes raw-state marker "raw state variable" at character ${p.indexOf('raw\nstate')}${tail}`,
    ]);
  });

  it('ignores an omitted ref that is blank once normalised (white space or format characters only)', () => {
    expect(validatePacket(packetWith('\nA line.', [' ', '\u200b', '\u00a0\n'])).errors).toEqual([]);
  });

  it('flags exactly the prompts retrieve refuses (differential, random spellings)', () => {
    const piece = fc.constantFrom('Brinefall', 'BRINEFALL', '\uff22rinefall', 'Truth', 'truth', 'raw', 'state', 'variable', 'dimension', 'score', 'x', '\u0301');
    const gap = fc.constantFrom(' ', '  ', '\u00a0', '\n', '\r\n', '\u200b', '\u200b ', '', '\t', '\u3000', '\u2028');
    const prompt = fc.array(fc.tuple(piece, gap), { maxLength: 8 }).map((ps) => ps.map(([a, b]) => a + b).join(''));
    fc.assert(
      fc.property(prompt, (extra) => {
        const d = packetWith(`\n${extra}`, ['Brinefall Truth']);
        const flagged = packetRules(d).some((e) => e.rule === 'prompt.hidden_ref' || e.rule === 'prompt.raw_state_marker');
        expect(flagged).toBe(hiddenTextIn(d.packet_prompt_text, ['Brinefall Truth']) !== null);
      }),
      { seed: 7, numRuns: 400 },
    );
  });

  it('reports a repeated excerpt ref_id at the later excerpt, naming the first', () => {
    const d = readJson(OWN_PACKET);
    const first = d.visible_context.source_excerpts[0];
    d.visible_context.source_excerpts.push({ ref_id: 'local.other', source_ref: 'fixtures/other.json', text: 'Other.' }, { ...first, text: 'Again.' });
    expect(validatePacket(d).errors).toEqual([
      {
        rule: 'excerpt.duplicate_ref_id',
        pointer: '/visible_context/source_excerpts/2/ref_id',
        message: 'ref_id "local.tide_gate" repeats /visible_context/source_excerpts/0/ref_id',
        expected: 'ref_id values unique within visible_context.source_excerpts',
      },
    ]);
  });

  it('compares ref_ids exactly: a case or width variant is another id', () => {
    const d = readJson(OWN_PACKET);
    d.visible_context.source_excerpts.push({ ref_id: 'LOCAL.TIDE_GATE', source_ref: 'x.json', text: 'A.' }, { ref_id: 'local.tide_gate ', source_ref: 'x.json', text: 'B.' });
    expect(validatePacket(d).errors).toEqual([]);
  });
});

describe.skipIf(!hasShared)(`validatePacket on the real Ghostlight packets (${hasShared ? 'shared data present' : sharedNotice})`, () => {
  const files = hasShared ? readdirSync(join(GHOSTLIGHT, 'packets')).filter((f) => f.endsWith('.json')).sort() : [];

  it('finds unique excerpt ref_ids and no hidden text under any spelling in all five', () => {
    expect(files).toHaveLength(5);
    for (const f of files) {
      const d = readJson(join(GHOSTLIGHT, 'packets', f));
      const ids = (d.visible_context.source_excerpts as { ref_id: string }[]).map((e) => e.ref_id);
      expect(new Set(ids).size, f).toBe(ids.length);
      expect(hiddenTextIn(d.packet_prompt_text, d.hidden_context_audit.omitted_context_refs), f).toBeNull();
      expect(validatePacket(d).errors, f).toEqual([]);
    }
  });
});
