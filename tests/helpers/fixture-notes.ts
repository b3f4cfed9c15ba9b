/**
 * Helpers for the notes-stage tests: read a vault folder without the indexer, parse every
 * note with parseNote, resolve links, and compare with golden JSON files (rewritten only with UPDATE=1;
 * a missing golden file is a failure).
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import type { ParsedNote } from '../../src/notes/index.js';
import { parseNote, resolveLinks } from '../../src/notes/index.js';
import type { Chunk, LinkRecord, NoteRecord } from '../../src/types.js';
import type { Finding } from '../../src/errors.js';
import { REPO } from './shared.js';

export const GOLDEN_PARSE = join(REPO, 'tests', 'golden', 'parse');

/** Every file under `root` (skipping dot-entries), as sorted NFC vault-relative POSIX paths. */
export function listVault(root: string, under = ''): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(child);
      else out.push(child);
    }
  };
  walk(under);
  return out.sort((a, b) => (a.normalize('NFC') < b.normalize('NFC') ? -1 : 1));
}

export interface ParsedVault {
  /** NFC path → on-disk relative path. */
  disk: Map<string, string>;
  parsed: Map<string, ParsedNote>;
  notes: NoteRecord[];
  chunks: Chunk[];
  links: LinkRecord[];
  files: string[];
  findings: Finding[];
}

/** Parse the `.md` files among `paths` (on-disk relative paths under `root`). */
export function parseVault(root: string, paths: string[]): ParsedVault {
  const v: ParsedVault = { disk: new Map(), parsed: new Map(), notes: [], chunks: [], links: [], files: [], findings: [] };
  for (const disk of paths) {
    const path = disk.normalize('NFC');
    v.disk.set(path, disk);
    if (!path.endsWith('.md')) {
      v.files.push(path);
      continue;
    }
    const r = parseNote(path, new Uint8Array(readFileSync(join(root, disk))));
    v.parsed.set(path, r);
    v.notes.push(r.note);
    v.chunks.push(...r.chunks);
    v.links.push(...r.links);
    v.findings.push(...r.findings);
  }
  return v;
}

/** Resolve a parsed vault's links (non-markdown files passed for embeds). */
export function resolveVault(v: ParsedVault): { links: LinkRecord[]; findings: Finding[] } {
  return resolveLinks(v.notes, v.chunks, v.links, { files: v.files });
}

/** Compare `value` with `tests/golden/parse/<name>.json`; UPDATE=1 rewrites it. */
export function expectGolden(name: string, value: unknown): void {
  const file = join(GOLDEN_PARSE, `${name}.json`);
  const json = `${JSON.stringify(value, null, 2)}\n`;
  if (process.env.UPDATE === '1') {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, json);
    return;
  }
  if (!existsSync(file)) {
    throw new Error(`golden file missing: ${file} (run UPDATE=1 npx vitest run tests/parse.test.ts to create it)`);
  }
  expect(JSON.parse(json)).toEqual(JSON.parse(readFileSync(file, 'utf8')));
}

/** Golden file name of a note path: `Edge/Links.md` → `Edge__Links.md`. */
export function goldenName(path: string): string {
  return path.replace(/\//g, '__');
}
