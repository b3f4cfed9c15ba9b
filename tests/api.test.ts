/**
 * The public API is frozen here (house style, after mdast-util-from-markdown's "exposes the public api"
 * test): adding or removing an export of src/index.ts is a deliberate change that must update this list.
 */
import { describe, expect, it } from 'vitest';
import * as api from '../src/index.js';

describe('loretrace public API', () => {
  it('exposes exactly the documented runtime exports', () => {
    expect(Object.keys(api).sort()).toEqual([
    'LoretraceError',
    'ProxySession',
    'VALIDATION_RULES',
    'assembleCapture',
    'backlinks',
    'bindTraceToLedger',
    'buildLock',
    'buildPacket',
    'checkEdge',
    'checkPath',
    'chunkNote',
    'chunksOf',
    'compilePolicy',
    'coverageReport',
    'createAjv',
    'createMcpServer',
    'exportLedger',
    'extractLinks',
    'formatRef',
    'generateRunnerKey',
    'getNote',
    'indexStats',
    'indexVault',
    'isLoretraceError',
    'isUnderPrefix',
    'loadNoteLines',
    'loadVaultConfig',
    'makeSourceExcerpt',
    'makeTraceEntry',
    'openProxySession',
    'outgoingLinks',
    'overCapNotes',
    'parseJsonDocument',
    'parseNote',
    'parseRef',
    'parseTraceId',
    'pickExcerptLines',
    'readArtifacts',
    'readNoteLines',
    'readSigningKey',
    'readTrustedKey',
    'remarkWikiLink',
    'renderCoverageHtml',
    'renderCoverageMarkdown',
    'resolveLink',
    'resolveLinks',
    'resolveRef',
    'retrieveBatch',
    'scanVault',
    'search',
    'searchCorpus',
    'serveMcpStdio',
    'sliceLines',
    'splitLines',
    'startHttpServer',
    'targetClasses',
    'traverse',
    'validateCapture',
    'validateCaptureFragment',
    'validateDocument',
    'validatePacket',
    'validateProjectedContext',
    'verifyLedger',
    'verifyLock',
    'verifyTrace',
    'writeCoverageFiles',
    ]);
  });

  it('exports every pipeline stage as a function', () => {
    const stages = ['scanVault', 'parseNote', 'chunkNote', 'extractLinks', 'resolveLinks', 'indexVault', 'search', 'parseRef', 'resolveRef', 'compilePolicy', 'traverse', 'makeTraceEntry', 'buildPacket', 'retrieveBatch', 'validatePacket', 'verifyTrace', 'openProxySession', 'verifyLedger', 'exportLedger', 'coverageReport'] as const;
    const kinds = stages.map((name) => [name, typeof (api as Record<string, unknown>)[name]]);
    expect(kinds).toEqual(stages.map((name) => [name, 'function']));
  });

  it('throws LoretraceError with a code, never a bare Error, for a bad ref', () => {
    let caught: unknown;
    try {
      api.parseRef('Lore:../etc/passwd.md', { namespace: 'Lore' });
    } catch (e) {
      caught = e;
    }
    expect(api.isLoretraceError(caught)).toBe(true);
    expect((caught as InstanceType<typeof api.LoretraceError>).code).toBe('bad_ref');
  });
});

describe("the README's Library API table", () => {
  it('lists exactly the runtime exports, and states their number', async () => {
    const { readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const readme = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8');
    // The table starts at its `| Stage | Module | Functions |` header and ends at the first line that is not a row.
    const start = readme.indexOf('| Stage | Module | Functions |');
    expect(start).toBeGreaterThan(-1);
    const rows = readme.slice(start).split('\n').filter((_, i, all) => all.slice(0, i + 1).every((l) => l.startsWith('|')));
    const names = rows.slice(2).flatMap((row) => {
      const functions = row.split('|')[3] ?? '';
      return [...functions.matchAll(/`([A-Za-z_][A-Za-z0-9_]*)`/g)].map((m) => m[1]!);
    });
    expect([...new Set(names)].sort()).toEqual(Object.keys(api).sort());
    expect(readme).toContain(`These ${Object.keys(api).length} names`);
  });
});

describe('docstrings of the public surface', () => {
  it('gives every exported function, class and constant a /** … */ docstring at its declaration', async () => {
    const { readFileSync, readdirSync } = await import('node:fs');
    const { join } = await import('node:path');
    const files: string[] = [];
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(dir, e.name));
        else if (e.name.endsWith('.ts')) files.push(join(dir, e.name));
      }
    };
    walk(join(import.meta.dirname, '..', 'src'));
    const undocumented: string[] = [];
    for (const name of Object.keys(api)) {
      const decl = new RegExp(`^export (?:async )?(?:function\\*? |class |const |let )${name}\\b`, 'm');
      const hit = files.map((f) => ({ f, text: readFileSync(f, 'utf8') })).find(({ text }) => decl.test(text));
      if (!hit) {
        undocumented.push(`${name}: declaration not found`);
        continue;
      }
      const before = hit.text.slice(0, hit.text.search(decl)).trimEnd();
      if (!before.endsWith('*/')) undocumented.push(`${name} (${hit.f})`);
    }
    expect(undocumented).toEqual([]);
  });
});
