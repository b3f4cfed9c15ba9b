/**
 * One type guard for a JSON object (src/contracts/json-object.ts), used by every reader of parsed
 * documents: no module keeps its own copy of the `typeof … === 'object' && … !== null && !Array.isArray(…)`
 * test, so an object is told from an array and from null the same way everywhere.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isJsonObject } from '../src/contracts/json-object.js';
import { REPO } from './helpers/shared.js';

/** Every .ts file under `dir`, recursively, sorted. */
function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []))
    .sort();
}

describe('isJsonObject', () => {
  it('is true for objects only, not for null, arrays or primitives', () => {
    const values: unknown[] = [{}, { a: 1 }, Object.create(null), [], [1], null, undefined, 0, '', 'x', true];
    expect(values.map(isJsonObject)).toEqual([true, true, true, false, false, false, false, false, false, false, false]);
  });
});

describe('the JSON object test', () => {
  it('is written once, in src/contracts/json-object.ts', () => {
    const copy = /typeof (\w+) === 'object' && \1 !== null && !Array\.isArray\(\1\)/;
    const files = tsFiles(join(REPO, 'src')).filter((f) => copy.test(readFileSync(f, 'utf8')));
    expect(files.map((f) => relative(REPO, f))).toEqual(['src/contracts/json-object.ts']);
  });
});
