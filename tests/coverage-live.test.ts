/**
 * `loretrace coverage` over artifacts the other commands really wrote — not hand-written fixtures:
 * `retrieve --out --capture-out` (responder packet + capture fragment), `traverse --json` (traverse
 * result), `serve --http` driven over HTTP (proxy ledger) and `ledger export` (capture fragment), all
 * against a temporary copy of lore-fixtures/FixtureLore. Then the copy is edited (a line rewritten, a
 * note deleted, a note cut short, a heading removed) and the same artifacts are reported again: every
 * kind of staleness a real artifact can show is asserted exactly.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import type { CoverageReport } from '../src/coverage/index.js';
import { FIXTURES, FIXTURE_VAULT, REPO } from './helpers/shared.js';

const BIN = join(REPO, 'bin', 'loretrace.js');
const PACKETS = join(FIXTURES, 'packets');
const schema = JSON.parse(readFileSync(join(REPO, 'schemas', 'coverage-report.schema.json'), 'utf8'));
const validateReport = new Ajv2020({ allErrors: true, strict: true }).compile(schema);

const W = 'World/Pre-Elysium';
const TERRITORIES = `${W}/Territories.md`;
const BLACKOUT = `${W}/Timeline/Events/Brinefall Blackout.md`;
const KESTREL = `${W}/Timeline/Events/Kestrel Route Accord.md`;
const QUIET = `${W}/Factions/Movements/Quiet Hands.md`;

let tmp: string;
let vault: string;
let art: string;
let idx: string;

async function run(argv: string[], cwd = tmp): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env: { ...process.env, LORETRACE_INDEX_DIR: '' }, cwd, isTTY: false });
  return { code, out, err };
}

/** `loretrace serve --http 127.0.0.1:0 --json` as a child process; resolves with its URL once it prints it. */
function serve(ledger: string): Promise<{ url: string; proc: ChildProcess }> {
  const proc = spawn(process.execPath, [BIN, 'serve', '--lore', vault, '--packet', join(PACKETS, 'proxy-fixture-research.packet.json'),
    '--ledger', ledger, '--http', '127.0.0.1:0', '--json', '--index-dir', idx], { cwd: tmp, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stderr!.on('data', (d) => (err += String(d)));
  return new Promise((resolve, reject) => {
    proc.stdout!.on('data', (d) => {
      out += String(d);
      try {
        resolve({ url: (JSON.parse(out) as { url: string }).url, proc });
      } catch {
        // not the whole JSON yet
      }
    });
    proc.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
}

async function tool(url: string, name: string, args: object): Promise<number> {
  const r = await fetch(`${url}/tools/${name}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(args) });
  await r.text();
  return r.status;
}

async function coverage(out: string, cwd = tmp, inputs: string[] = [art]): Promise<{ code: number; report: CoverageReport; stdout: string }> {
  const r = await run(['coverage', '--lore', vault, ...inputs, '--out', out, '--index-dir', idx, '--json'], cwd);
  // An exit 1 (stale citations) says why in one line on stderr; an exit 0 prints nothing there.
  if (r.code === 0) expect(r.err).toBe('');
  else expect(r.err).toMatch(/^loretrace: coverage exits 1: \d+ stale citations? \(first: [^\n]+ is [a-z_]+\); the report was written all the same\n$/);
  return { code: r.code, report: JSON.parse(readFileSync(join(out, 'coverage.json'), 'utf8')) as CoverageReport, stdout: r.out };
}

const A = (name: string): string => join(art, name);

describe('loretrace coverage on artifacts written live by retrieve, traverse, serve and ledger export', () => {
  let report: CoverageReport;
  let code: number;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'loretrace-cov-live-'));
    vault = join(tmp, 'FixtureLore');
    art = join(tmp, 'art');
    idx = join(tmp, 'idx');
    cpSync(FIXTURE_VAULT, vault, { recursive: true });
    mkdirSync(art);

    // A lore budget wide enough for every traversal excerpt (the default would cut Kestrel Route Accord,
    // whose cited lines the stale checks below truncate). The walk, under its relevance stop, follows
    // Meridian Compact, Quiet Hands and Kestrel Route Accord; Quiet Hands is removed below (missing_path).
    const policy = JSON.parse(readFileSync(join(PACKETS, 'brinefall-intake.policy.json'), 'utf8')) as { stop_conditions: string[] };
    policy.stop_conditions.push('max_chunks:5', 'max_chars:4000');
    writeFileSync(join(tmp, 'policy.json'), JSON.stringify(policy));
    const retrieve = await run(['retrieve', '--lore', vault, '--packet', join(PACKETS, 'brinefall-intake.turn-01.mara-voss.draft.packet.json'),
      '--projected-context', join(PACKETS, 'brinefall-intake.turn-01.mara-voss.projected-context.json'), '--policy', join(tmp, 'policy.json'),
      '--out', A('packet.json'), '--capture-out', A('lore_access.json'), '--index-dir', idx]);
    expect(retrieve.code, retrieve.err).toBe(0);

    const traverse = await run(['traverse', '--lore', vault, '--policy', join(FIXTURES, 'policies', 'world-blackout.policy.json'), '--query', 'blackout', '--json', '--index-dir', idx]);
    expect(traverse.code, traverse.err).toBe(0);
    writeFileSync(A('traverse.json'), traverse.out);

    const { url, proc } = await serve(A('ledger.jsonl'));
    try {
      expect(await tool(url, 'lore_read', { ref: `FixtureLore:${TERRITORIES}#Brinefall Shelf` })).toBe(200); // lines 5-8
      expect(await tool(url, 'lore_search', { query: 'sanctuary berths', k: 2 })).toBe(200); // hits are not reads
      expect(await tool(url, 'lore_follow', { from_ref: `FixtureLore:${TERRITORIES}`, target: 'Brinefall Blackout' })).toBe(200);
      expect(await tool(url, 'lore_read', { ref: `FixtureLore:${BLACKOUT}` })).toBe(200); // two chunks: 1-7, 9-13
      expect(await tool(url, 'lore_read', { ref: `FixtureLore:${TERRITORIES}`, line_start: 2, line_end: 3 })).toBe(200);
      expect(await tool(url, 'lore_read', { ref: 'FixtureLore:World/Post-Elysium/Veil Drive.md' })).toBe(403); // refused: not a read
    } finally {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
    }
    const exported = await run(['ledger', 'export', A('ledger.jsonl'), '--lore', vault, '--out', A('export.json')]);
    expect(exported.code, exported.err).toBe(0);

    ({ report, code } = await coverage(join(tmp, 'out1')));
  }, 60_000);

  afterAll(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('recognises each artifact the CLI wrote, with every citation holding and the snapshot matching', () => {
    expect(code).toBe(0);
    // The lock files retrieve and ledger export wrote beside their outputs cite no lore: listed, not read.
    expect(report.skipped.map((s) => [s.file.slice(art.length + 1), s.reason])).toEqual([['export.lock.json', 'no_lore_refs'], ['packet.lock.json', 'no_lore_refs']]);
    expect(report.artifacts.map((a) => [a.file.slice(art.length + 1), a.kind, a.schema_version, a.snapshot_matches, a.lore_citations, a.stale_citations, a.non_lore_refs])).toEqual([
      ['export.json', 'capture_fragment', null, true, 6, 0, 0],
      ['ledger.jsonl', 'proxy_ledger', 'loretrace.ledger.v4', true, 4, 0, 0],
      ['lore_access.json', 'capture_fragment', null, true, 8, 0, 0],
      ['packet.json', 'responder_packet', 'ghostlight.responder_packet.v0', null, 4, 0, 1],
      // retrieve's own ledger, named by its lane: one served range per chunk the walk excerpted (the fragment's four trace entries).
      ['packet.ledger.jsonl', 'retrieve_ledger', 'loretrace.ledger.v4', true, 4, 0, 0],
      ['traverse.json', 'traverse_result', 'loretrace.traverse_result.v1', true, 15, 0, 0],
    ]);
    expect(report.totals.stale_by_status).toEqual({ missing_path: 0, missing_fragment: 0, range_beyond_eof: 0, invalid_range: 0, text_changed: 0 });
    // One lookup counts once: the ledger, its export and the fragment repeat the reads of their run (19 repeats).
    expect([report.totals.unverifiable_citations, report.totals.whole_citations, report.totals.lore_citations, report.totals.repeated_citations]).toEqual([0, 7, 22, 19]);
    // The packet's scene-digest excerpt is not vault lore: counted apart.
    expect(report.non_lore_refs.map((r) => r.ref)).toEqual(['lore-fixtures/packets/brinefall-intake.turn-01.scene-digest.json#capacity']);
  });

  it('reads the ledger\'s lore_read ranges (not the search hits, the follow or the refusal) and the export\'s trace', () => {
    const of = (file: string): string[] => report.citations.filter((c) => c.artifact === A(file)).map((c) => `${c.role} ${c.ref.replace('FixtureLore:', '')} ${c.line_start}-${c.line_end} ${c.record_line ?? ''}`.trim());
    expect(of('ledger.jsonl')).toEqual([
      // record_line: the TOOL_RESULT lines (each after its TOOL_CALL, which cites nothing).
      `ledger_result ${TERRITORIES}#chunk1 5-8 3`,
      `ledger_result ${BLACKOUT}#chunk0 1-7 9`,
      `ledger_result ${BLACKOUT}#chunk1 9-13 9`,
      `ledger_result ${TERRITORIES}#L2-L3 2-3 11`,
    ]);
    expect(of('export.json')).toEqual([
      `consulted_ref ${TERRITORIES} 1-14`,
      `followed_ref ${BLACKOUT} 1-13`,
      `research_trace ${TERRITORIES}#chunk1 5-8`,
      `research_trace ${BLACKOUT}#chunk0 1-7`,
      `research_trace ${BLACKOUT}#chunk1 9-13`,
      `research_trace ${TERRITORIES}#L2-L3 2-3`,
    ]);
    // A packet excerpt cites the lines it quotes, located inside its #chunkN. Excerpts are compact: Kestrel's
    // field lines 3-4 are never excerpted, so its sentences are lines 6-7; Meridian Compact's "Rumors and Gaps"
    // chunk has no lore line the packet may carry (line 24 links hidden lore, line 25 is a "See also" line),
    // so the excerpt is the note's line 7.
    expect(of('packet.json')).toEqual([
      `source_excerpt ${BLACKOUT}#chunk1 11-12`,
      `source_excerpt ${W}/Factions/Powers/Major/Meridian Compact.md#chunk0 7-7`,
      `source_excerpt ${W}/Factions/Movements/Quiet Hands.md#chunk1 7-7`,
      `source_excerpt ${KESTREL}#chunk0 6-7`,
    ]);
    expect(report.citations.filter((c) => c.artifact === A('packet.json')).map((c) => [c.cites, c.checked])).toEqual(Array(4).fill(['lines', 'excerpt_text']));
  });

  it('gives exact per-note, per-folder and per-class figures', () => {
    // Covered lines come only from line citations (trace entries, ledger reads, located excerpts); the whole-note
    // consulted and followed refs are "note cited" (a note followed once is not 17/17 lines), and so are the
    // proxy's reads of Blackout (whole note) and Territories #Brinefall Shelf (a section). Citations are lookups:
    // the packet, its ledger and its fragment cite one retrieve read once; the proxy ledger and its export likewise.
    const cited = report.notes.filter((n) => n.citations > 0).map((n) => [n.path, n.citations, n.whole_citations, n.artifacts, n.covered_lines, n.body_lines, n.cited_ranges]);
    expect(cited).toEqual([
      // The traverse result (world policy, query "blackout") adds Halcyon Mutual, Meridian Compact and Kestrel.
      [QUIET, 1, 0, 3, 1, 7, [[7, 7]]],
      // Field lines (Halcyon 3-4, Kestrel 3-4) and "See also" lines (Meridian 25) are never excerpted.
      [`${W}/Factions/Powers/Major/Halcyon Mutual.md`, 3, 1, 1, 1, 7, [[6, 6]]],
      [`${W}/Factions/Powers/Major/Meridian Compact.md`, 4, 1, 4, 2, 17, [[7, 7], [24, 24]]],
      [TERRITORIES, 5, 2, 3, 2, 9, [[2, 3], [14, 14]]],
      [BLACKOUT, 5, 2, 6, 3, 9, [[7, 7], [11, 12]]],
      [KESTREL, 4, 1, 4, 2, 5, [[6, 7]]],
    ]);
    expect(report.folders.find((f) => f.folder === `${W}/Timeline`)).toEqual({
      folder: `${W}/Timeline`, depth: 3, notes: 2, cited_notes: 2, citations: 9, whole_citations: 3, unverifiable_citations: 0, artifacts: 6, stale_citations: 0, body_lines: 14, covered_lines: 5, line_coverage: 0.3571,
    });
    const major = report.classes.find((c) => c.class === 'major');
    expect(major).toEqual({
      class: 'major', notes: 3, cited_notes: 2, citations: 7, whole_citations: 2, unverifiable_citations: 0, artifacts: 4, stale_citations: 0, body_lines: 33, covered_lines: 3, line_coverage: 0.0909,
      never_cited: [`${W}/Factions/Powers/Major/Saltglass Syndicate.md`],
    });
    expect(report.classes.find((c) => c.class === 'post-elysium')?.never_cited).toEqual(['World/Post-Elysium/Echo Minds.md', 'World/Post-Elysium/Veil Drive.md', 'World/Post-Elysium/index.md']);
    expect(report.untouched_classes).toContain('post-elysium');
    expect(report.untouched_classes).not.toContain('events');
  });

  it('writes a schema-valid coverage.json, byte-identical when run again and when run from another working directory', async () => {
    expect(validateReport(report), JSON.stringify(validateReport.errors)).toBe(true);
    const again = await coverage(join(tmp, 'out2'));
    const elsewhere = await coverage(join(tmp, 'out3'), REPO);
    for (const f of ['coverage.json', 'coverage.md', 'coverage.html']) {
      const first = readFileSync(join(tmp, 'out1', f));
      expect(readFileSync(join(tmp, 'out2', f)).equals(first), `${f} second run`).toBe(true);
      expect(readFileSync(join(tmp, 'out3', f)).equals(first), `${f} other cwd`).toBe(true);
    }
    expect(JSON.parse(again.stdout).files).toEqual({ json: `${tmp}/out2/coverage.json`, md: `${tmp}/out2/coverage.md`, html: `${tmp}/out2/coverage.html` });
    expect(JSON.parse(elsewhere.stdout).totals).toEqual(report.totals);
  });

  describe('after the vault changes under the same artifacts', () => {
    let stale: CoverageReport;
    let staleCode: number;

    beforeAll(async () => {
      const edit = (path: string, fn: (lines: string[]) => string[]): void => {
        const file = join(vault, path);
        writeFileSync(file, fn(readFileSync(file, 'utf8').split('\n')).join('\n'));
      };
      // Territories line 7 rewritten (lines stay where they were).
      edit(TERRITORIES, (ls) => ls.map((l, i) => (i === 6 ? 'Brinefall Shelf was abandoned after the flood.' : l)));
      // Brinefall Blackout loses its "## Aftermath" heading: one chunk left, same line count.
      edit(BLACKOUT, (ls) => ls.map((l, i) => (i === 8 ? 'Aftermath.' : l)));
      // Kestrel Route Accord cut to its first 4 lines.
      edit(KESTREL, (ls) => ls.slice(0, 4));
      unlinkSync(join(vault, QUIET));
      ({ report: stale, code: staleCode } = await coverage(join(tmp, 'out-stale')));
    }, 60_000);

    it('exits 1 and counts every stale status a real artifact can show', () => {
      expect(staleCode).toBe(1);
      // invalid_range (line_end < line_start) is never written by loretrace's own tools; tests/coverage.test.ts covers it.
      // Counted once per lookup: Quiet Hands is one retrieve read (packet, ledger, fragment); each changed proxy
      // read is one text_changed (the Blackout whole-note read counts as stale through its changed chunk).
      expect(stale.totals.stale_by_status).toEqual({ missing_path: 1, missing_fragment: 1, range_beyond_eof: 2, invalid_range: 0, text_changed: 2 });
      // Staleness is decided per cited range: a snapshot change alone makes nothing stale; bare refs that recorded no
      // text are unverifiable, counted apart.
      expect(stale.totals.unverifiable_citations).toBe(6);
      expect(stale.artifacts.map((a) => [a.file.slice(art.length + 1), a.snapshot_matches, a.lore_citations, a.stale_citations])).toEqual([
        ['export.json', false, 6, 2],
        ['ledger.jsonl', false, 4, 2],
        ['lore_access.json', false, 8, 3],
        ['packet.json', null, 4, 2],
        ['packet.ledger.jsonl', false, 4, 2],
        ['traverse.json', false, 15, 1],
      ]);
      expect(stale.notes.some((n) => n.path === QUIET)).toBe(false);
      // Territories: stale citations cover nothing; what still holds is lines 2-3 (ledger, export) and line 14 (traverse trace).
      expect(stale.notes.find((n) => n.path === TERRITORIES)).toMatchObject({ citations: 5, artifacts: 3, stale_citations: 1, unverifiable_citations: 1, covered_lines: 2, body_lines: 9, line_coverage: 0.2222, cited_ranges: [[2, 3], [14, 14]] });
    });

    it('names each stale citation with its artifact, pointer and what changed', () => {
      const gone = `no note ${QUIET} in vault FixtureLore`;
      expect(stale.snapshot_id).not.toBe(report.snapshot_id);
      expect(stale.stale.map((c) => [c.artifact.slice(art.length + 1), c.pointer, c.ref.replace('FixtureLore:', ''), c.status, c.detail])).toEqual([
        ['export.json', '/research_trace/0', `${TERRITORIES}#chunk1`, 'text_changed', `${TERRITORIES} lines 5-8 no longer hold the recorded text (first difference at line 7)`],
        ['export.json', '/research_trace/2', `${BLACKOUT}#chunk1`, 'text_changed', `${BLACKOUT} lines 9-13 no longer hold the recorded text (first difference at line 9)`],
        // The v2 ledger records the sha256 of each served range, not its text (seed 004): the change shows as a hash mismatch.
        ['ledger.jsonl', '/outcome/served/0', `${TERRITORIES}#chunk1`, 'text_changed', `${TERRITORIES} lines 5-8 no longer hold the recorded text (sha256 of the lines differs from the recorded one)`],
        ['ledger.jsonl', '/outcome/served/1', `${BLACKOUT}#chunk1`, 'text_changed', `${BLACKOUT} lines 9-13 no longer hold the recorded text (sha256 of the lines differs from the recorded one)`],
        ['lore_access.json', '/followed_refs/1', QUIET, 'missing_path', gone],
        ['lore_access.json', '/research_trace/2', `${QUIET}#chunk1`, 'missing_path', gone],
        ['lore_access.json', '/research_trace/3', `${KESTREL}#chunk0`, 'range_beyond_eof', `cited lines 6-7: line 7 is past the end of ${KESTREL}, which has 4 lines`],
        ['packet.json', '/visible_context/source_excerpts/1/source_ref', `${BLACKOUT}#chunk1`, 'missing_fragment', `${BLACKOUT} has 1 chunks (0..0), not chunk1`],
        ['packet.json', '/visible_context/source_excerpts/3/source_ref', `${QUIET}#chunk1`, 'missing_path', gone],
        // retrieve's ledger records each read's range and text hash: the same two ranges as the fragment's trace.
        ['packet.ledger.jsonl', '/outcome/served/0', `${QUIET}#chunk1`, 'missing_path', gone],
        ['packet.ledger.jsonl', '/outcome/served/0', `${KESTREL}#chunk0`, 'range_beyond_eof', `cited lines 6-7: line 7 is past the end of ${KESTREL}, which has 4 lines`],
        // The traverse trace cites Kestrel's prose lines 6-7 (its field lines 3-4 are never an excerpt).
        ['traverse.json', '/research_trace/4', `${KESTREL}#chunk0`, 'range_beyond_eof', `cited lines 6-7: line 7 is past the end of ${KESTREL}, which has 4 lines`],
      ]);
      const unver = `artifact records snapshot ${report.snapshot_id.slice(0, 12)}, vault is at ${stale.snapshot_id.slice(0, 12)}, and no text or hash for these lines; the ref still resolves, but whether its lines changed cannot be told`;
      expect(stale.citations.filter((c) => c.status === 'unverifiable').map((c) => [c.artifact.slice(art.length + 1), c.pointer, c.ref.replace('FixtureLore:', ''), c.detail])).toEqual([
        ['export.json', '/consulted_refs/0', TERRITORIES, unver],
        ['export.json', '/followed_refs/0', BLACKOUT, unver],
        ['lore_access.json', '/consulted_refs/0', BLACKOUT, unver],
        ['lore_access.json', '/followed_refs/0', `${W}/Factions/Powers/Major/Meridian Compact.md`, unver],
        ['lore_access.json', '/followed_refs/2', KESTREL, unver],
        // Kestrel's excerpt (lines 6-7) can no longer be located in the 4 lines left, and records no line range of its own.
        ['traverse.json', '/source_excerpts/4/source_ref', `${KESTREL}#chunk0`, unver],
        ['traverse.json', '/consulted_refs/0', BLACKOUT, unver],
        ['traverse.json', '/consulted_refs/1', TERRITORIES, unver],
        ['traverse.json', '/followed_refs/0', `${W}/Factions/Powers/Major/Meridian Compact.md`, unver],
        ['traverse.json', '/followed_refs/1', `${W}/Factions/Powers/Major/Halcyon Mutual.md`, unver],
        ['traverse.json', '/followed_refs/2', KESTREL, unver],
      ]);
      // An edit elsewhere in a cited note does not make a citation stale: Brinefall Blackout lost a heading at line 9,
      // and the traverse result's excerpts (recorded under the old snapshot) still hold; Kestrel's lines 6-7 are gone.
      expect(stale.citations.filter((c) => c.artifact === A('traverse.json') && c.role === 'source_excerpt').map((c) => [c.ref.replace('FixtureLore:', ''), c.line_start, c.line_end, c.status, c.checked])).toEqual([
        [`${BLACKOUT}#chunk0`, 7, 7, 'ok', 'excerpt_text'],
        [`${TERRITORIES}#chunk2`, 14, 14, 'ok', 'excerpt_text'],
        [`${W}/Factions/Powers/Major/Meridian Compact.md#chunk3`, 24, 24, 'ok', 'excerpt_text'],
        [`${W}/Factions/Powers/Major/Halcyon Mutual.md#chunk0`, 6, 6, 'ok', 'excerpt_text'],
        [`${KESTREL}#chunk0`, 1, 4, 'unverifiable', 'none'],
      ]);
      // Recorded text that still matches keeps a citation ok across the snapshot change (ledger and export: Blackout 1-7, Territories 2-3).
      expect(stale.citations.filter((c) => c.artifact === A('ledger.jsonl') && c.status === 'ok').map((c) => [c.line_start, c.line_end])).toEqual([[1, 7], [2, 3]]);
    });

    it('still validates against the schema', () => {
      expect(validateReport(stale), JSON.stringify(validateReport.errors)).toBe(true);
    });
  });
});
