/**
 * Fixtures that stand for Ghostlight files must not drift from what they stand for. Two kinds:
 *
 * - `lore-fixtures/policies/ghostlight/<scene>.policy.json` is the policy `retrieve --batch --policy-dir`
 *   finds for a real Ghostlight scene by its name (docs/RETRIEVE.md "batch": the longest dotted prefix of a
 *   draft's id). Each is a byte-for-byte copy of a scene policy kept beside it (docs/RETRIEVE.md names
 *   them), and against the real files (`../shared`) its scene must be one of Ghostlight's packets and its
 *   seeds and prefixes must name notes and folders of the Aetheria vault.
 * - Any file under `lore-fixtures/` named like a file of `../shared/ghostlight/` is either byte-identical to
 *   it or listed below as a deliberate derivative, with the reason; a new same-named file that is neither
 *   fails here, so a stale copy cannot pass as the original.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AETHERIA, FIXTURES, GHOSTLIGHT, REPO, hasShared, sharedNotice } from './helpers/shared.js';

/** Each Ghostlight-scene policy and the fixture policy it copies (docs/RETRIEVE.md "batch", step 2). */
const SCENE_POLICY_SOURCES: Record<string, string> = {
  'pallas-training-loop-v0.policy.json': 'lore-fixtures/policies/pallas-strikes.policy.json',
  'lucent-hostage-feed-v0.policy.json': 'lore-fixtures/policies/lucent-media.policy.json',
};

/** Fixtures named like a Ghostlight file that are deliberately not copies of it, and why. */
const DERIVATIVES: Record<string, string> = {
  'lore-fixtures/corpus/corpus-coverage.json':
    'a small corpus ledger in Ghostlight\'s shape naming subjects of lore-fixtures/FixtureLore (its own coverage_id and fixtures), so coverage tests run without ../shared',
};

const SCENE_DIR = join(FIXTURES, 'policies', 'ghostlight');

/** Every file under `dir`, recursively, as absolute paths (dot-entries skipped). */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

describe('lore-fixtures/policies/ghostlight: copies of the scene policies beside them', () => {
  it('holds exactly the listed scene policies', () => {
    expect(readdirSync(SCENE_DIR).sort()).toEqual(Object.keys(SCENE_POLICY_SOURCES).sort());
  });

  for (const [name, source] of Object.entries(SCENE_POLICY_SOURCES)) {
    it(`${name} is byte for byte ${source}`, () => {
      expect(readFileSync(join(SCENE_DIR, name), 'utf8')).toBe(readFileSync(join(REPO, source), 'utf8'));
    });
  }
});

describe.skipIf(!hasShared)(`lore-fixtures against the real Ghostlight files (${hasShared ? 'shared data present' : sharedNotice})`, () => {
  it('names each scene policy after a scene of Ghostlight\'s packets, with seeds and prefixes the Aetheria vault has', () => {
    const packets = readdirSync(join(GHOSTLIGHT, 'packets'));
    for (const name of Object.keys(SCENE_POLICY_SOURCES)) {
      const scene = name.replace(/\.policy\.json$/, '');
      expect(packets.filter((p) => p.startsWith(`${scene}.`)).length, `${scene}: drafts in ../shared/ghostlight/packets`).toBeGreaterThan(0);
      const policy = JSON.parse(readFileSync(join(SCENE_DIR, name), 'utf8')) as { allowed_prefixes: string[]; required_seed_refs: string[] };
      for (const seed of policy.required_seed_refs) {
        expect(existsSync(join(AETHERIA, seed.replace(/^AetheriaLore:/, ''))), `${name} seed ${seed}`).toBe(true);
      }
      for (const prefix of policy.allowed_prefixes) {
        expect(statSync(join(AETHERIA, prefix.replace(/^AetheriaLore:/, ''))).isDirectory(), `${name} prefix ${prefix}`).toBe(true);
      }
    }
  });

  it('has no fixture named like a Ghostlight file that is neither identical to it nor a listed derivative', () => {
    const originals = new Map<string, string[]>();
    for (const f of filesUnder(GHOSTLIGHT)) originals.set(basename(f), [...(originals.get(basename(f)) ?? []), f]);
    const sameNamed = filesUnder(FIXTURES).filter((f) => originals.has(basename(f)));
    const verdicts = sameNamed.map((f) => {
      const rel = relative(REPO, f);
      const identical = originals.get(basename(f))!.some((o) => readFileSync(o).equals(readFileSync(f)));
      return [rel, identical ? 'identical' : DERIVATIVES[rel] !== undefined ? 'derivative' : 'DRIFTED'];
    });
    expect(verdicts).toEqual([['lore-fixtures/corpus/corpus-coverage.json', 'derivative']]);
  });
});
