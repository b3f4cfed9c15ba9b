/**
 * Differential proof that loretrace's own contract schemas (schemas/*.schema.json) accept exactly what
 * Ghostlight's schemas accept: on every real file in ../shared/ghostlight and on thousands of generated
 * mutations of them, both give the same verdict and the same set of (pointer, keyword, params) errors.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { compiledSchema, createAjv, loadSchema, SCHEMA_FILES } from '../src/contracts/schemas.js';
import type { ContractKind as DocumentKind } from '../src/contracts/types.js';
import { GHOSTLIGHT, hasShared, sharedNotice } from './helpers/shared.js';

const DIRS: Record<DocumentKind, string> = { packet: 'packets', capture: 'captures', 'projected-context': 'projected-contexts' };
const GHOSTLIGHT_SCHEMA: Record<DocumentKind, string> = {
  packet: 'responder-packet.schema.json',
  capture: 'responder-output.schema.json',
  'projected-context': 'projected-local-context.schema.json',
};
const KINDS = Object.keys(DIRS) as DocumentKind[];

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Path = (string | number)[];

/** Every node path of a JSON value, the root included. */
function paths(v: Json, at: Path = []): Path[] {
  const out: Path[] = [at];
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...paths(x, [...at, i])));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) out.push(...paths(x, [...at, k]));
  return out;
}

function get(v: Json, p: Path): Json {
  let cur: Json = v;
  for (const t of p) cur = (cur as Record<string | number, Json>)[t] as Json;
  return cur;
}

/**
 * The mutations of one node, each as [label, apply]: remove it (object members), give it the wrong type, empty
 * string, unknown enum value, negative / fractional number, flipped boolean, empty array, extra item, extra property.
 */
function mutationsAt(doc: Json, p: Path): [string, (d: Json) => void][] {
  const v = get(doc, p);
  const set = (x: Json) => (d: Json) => {
    if (p.length === 0) return;
    const parent = get(d, p.slice(0, -1)) as Record<string | number, Json>;
    parent[p[p.length - 1] as string | number] = structuredClone(x);
  };
  const out: [string, (d: Json) => void][] = [];
  const parentIsObject = p.length > 0 && !Array.isArray(get(doc, p.slice(0, -1)));
  if (parentIsObject) out.push(['remove', (d) => void delete (get(d, p.slice(0, -1)) as Record<string, Json>)[p[p.length - 1] as string]]);
  if (typeof v === 'string') {
    out.push(['wrong type', set(42)], ['empty string', set('')], ['unknown enum value', set('not_a_ghostlight_value')]);
  } else if (typeof v === 'number') {
    out.push(['wrong type', set('7')], ['negative', set(-1)], ['fraction', set(1.5)], ['zero', set(0)]);
  } else if (typeof v === 'boolean') {
    out.push(['wrong type', set('true')], ['flipped', set(!v)]);
  } else if (Array.isArray(v)) {
    out.push(['wrong type', set({})], ['empty array', set([])], ['extra item', (d) => void (get(d, p) as Json[]).push(42)]);
  } else if (v && typeof v === 'object') {
    if (p.length > 0) out.push(['wrong type', set([])]);
    out.push(['extra property', (d) => void ((get(d, p) as Record<string, Json>).__loretrace_extra__ = 'x')]);
  }
  return out;
}

/** Order-free signature of ajv errors: pointer, keyword and params (schemaPath differs by design). */
function signature(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => `${e.instancePath} ${e.keyword} ${JSON.stringify(e.params)}`).sort();
}

function ghostlightValidators(): Record<DocumentKind, ValidateFunction> {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  const out = {} as Record<DocumentKind, ValidateFunction>;
  for (const k of KINDS) out[k] = ajv.compile(JSON.parse(readFileSync(join(GHOSTLIGHT, 'schemas', GHOSTLIGHT_SCHEMA[k]), 'utf8')));
  return out;
}

describe('compiledSchema', () => {
  it('compiles all three contract schemas in ajv strict mode, once', () => {
    for (const k of KINDS) {
      expect(typeof compiledSchema(k)).toBe('function');
      expect(compiledSchema(k)).toBe(compiledSchema(k));
      expect(compiledSchema(k, true)).toBe(compiledSchema(k, true));
      expect(compiledSchema(k, true)).not.toBe(compiledSchema(k));
    }
  });

  it('gives every schema a loretrace $id and the 2020-12 dialect', () => {
    expect(KINDS.map((k) => loadSchema(k).$id)).toEqual([
      'https://loretrace.dev/schemas/responder-packet.schema.json',
      'https://loretrace.dev/schemas/responder-output.schema.json',
      'https://loretrace.dev/schemas/projected-local-context.schema.json',
    ]);
    for (const k of KINDS) expect(loadSchema(k).$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(Object.values(SCHEMA_FILES)).toEqual(['responder-packet.schema.json', 'responder-output.schema.json', 'projected-local-context.schema.json', 'capture-fragment.schema.json']);
  });
});

describe('createAjv', () => {
  it('lets other schemas $ref the one research_trace_entry definition', () => {
    const ajv = createAjv();
    const check = ajv.compile({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: 'https://loretrace.dev/schemas/test-trace-list.schema.json',
      type: 'array',
      items: { $ref: 'https://loretrace.dev/schemas/responder-output.schema.json#/$defs/research_trace_entry' },
    });
    const entry = {
      trace_id: 't1', origin: 'runner_captured', query: 'q', source_ref: 'AetheriaLore:A.md#chunk0', source_path: 'A.md',
      chunk_index: 0, line_start: 3, line_end: 4, extracted_constraint: 'text', used_for: 'why',
    };
    expect(check([entry])).toBe(true);
    expect(check([{ ...entry, line_start: 0 }])).toBe(false);
    expect(check.errors?.map((e) => [e.instancePath, e.keyword])).toEqual([['/0/line_start', 'minimum']]);
    expect(check([{ ...entry, origin: 'guessed' }])).toBe(false);
    expect(check.errors?.map((e) => [e.instancePath, e.keyword])).toEqual([['/0/origin', 'enum']]);
  });
});

describe.skipIf(!hasShared)(`schemas vs Ghostlight's schemas (${hasShared ? 'shared data present' : sharedNotice})`, () => {
  it('give identical verdicts and errors on every real file', () => {
    const theirs = ghostlightValidators();
    const verdicts: Record<string, boolean> = {};
    for (const k of KINDS) {
      for (const f of readdirSync(join(GHOSTLIGHT, DIRS[k])).sort()) {
        const doc = JSON.parse(readFileSync(join(GHOSTLIGHT, DIRS[k], f), 'utf8')) as Json;
        const ours = compiledSchema(k);
        const okOurs = ours(doc);
        const okTheirs = theirs[k](doc);
        expect(okOurs, f).toBe(okTheirs);
        expect(signature(ours.errors), f).toEqual(signature(theirs[k].errors));
        verdicts[f] = okOurs;
      }
    }
    expect(verdicts).toEqual({
      'lucent-hostage-feed-v0.turn-06.sol-vant.packet.json': true,
      'lucent-hostage-feed-v0.turn-14.sol-vant.packet.json': true,
      'pallas-training-loop-v0.turn-01.nara-7.packet.json': true,
      'pallas-training-loop-v0.turn-02.ilya-marne.packet.json': true,
      'scene-02-sanctuary-intake.sella_ren.packet.research.v0.json': true,
      'lucent-hostage-feed-v0.turn-06.sol-vant.packet.capture.json': false,
      'lucent-hostage-feed-v0.turn-14.sol-vant.packet.capture.json': false,
      'pallas-training-loop-v0.turn-01.nara-7.packet.capture.json': true,
      'pallas-training-loop-v0.turn-02.ilya-marne.packet.capture.json': true,
      'lucent-hostage-feed-v0.turn-06.sol-vant.projected-context.json': false,
      'lucent-hostage-feed-v0.turn-14.sol-vant.projected-context.json': false,
      'pallas-training-loop-v0.turn-01.nara-7.projected-context.json': false,
      'pallas-training-loop-v0.turn-02.ilya-marne.projected-context.json': false,
    });
  });

  it('give identical verdicts and errors on every generated mutation of every real file', () => {
    const theirs = ghostlightValidators();
    let total = 0;
    let rejected = 0;
    const disagreements: string[] = [];
    for (const k of KINDS) {
      const ours = compiledSchema(k);
      for (const f of readdirSync(join(GHOSTLIGHT, DIRS[k])).sort()) {
        const original = JSON.parse(readFileSync(join(GHOSTLIGHT, DIRS[k], f), 'utf8')) as Json;
        for (const p of paths(original)) {
          for (const [label, apply] of mutationsAt(original, p)) {
            const doc = structuredClone(original);
            apply(doc);
            total++;
            const a = ours(doc);
            const b = theirs[k](doc);
            if (!a) rejected++;
            if (a !== b || JSON.stringify(signature(ours.errors)) !== JSON.stringify(signature(theirs[k].errors))) {
              disagreements.push(`${f} /${p.join('/')} ${label}: ours ${a}, Ghostlight ${b}`);
            }
          }
        }
      }
    }
    expect(disagreements).toEqual([]);
    // Thousands of mutations, both verdicts exercised (the exact count depends only on the read-only shared files).
    expect(total).toBeGreaterThan(3000);
    expect(rejected).toBeGreaterThan(1000);
    expect(total - rejected).toBeGreaterThan(100);
  });
});
