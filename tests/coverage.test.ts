/**
 * Coverage reports: artifact recognition, the pure report on hand-built and real indexes,
 * the renderers, the `coverage` command, and the real AetheriaLore vault with the Ghostlight artifacts.
 * The browser check of coverage.html is in tests/coverage-browser.test.ts.
 */
import { cell } from '../src/coverage/render-md.js';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  coverageReport,
  loadNoteLines,
  readArtifacts,
  recogniseArtifact,
  renderCoverageHtml,
  renderCoverageMarkdown,
} from '../src/coverage/index.js';
import { folderOnlyClasses } from '../src/coverage/render-html.js';
import type { CoverageArtifact, CoverageReport, SkippedInput } from '../src/coverage/index.js';
import { indexVault } from '../src/indexer/index.js';
import { main } from '../src/cli/main.js';
import type { Chunk, LinkRecord, NoteRecord, VaultIndex } from '../src/types.js';
import { AETHERIA, FIXTURE_VAULT, GHOSTLIGHT, REPO, hasShared, sharedNotice } from './helpers/shared.js';

/** How readArtifacts names Ghostlight files when run from the repo (`../shared/ghostlight/` by default). */
const GL = relative(REPO, GHOSTLIGHT).split(sep).join('/') + '/';
const schema = JSON.parse(readFileSync(join(REPO, 'schemas', 'coverage-report.schema.json'), 'utf8'));
const validateReport = new Ajv2020({ allErrors: true, strict: true }).compile(schema);

function art(file: string, text: string | object): CoverageArtifact {
  const r = recogniseArtifact(file, typeof text === 'string' ? text : JSON.stringify(text));
  if ('reason' in r) throw new Error(`expected an artifact, got skipped: ${r.message}`);
  return r;
}

function skipped(file: string, text: string): SkippedInput {
  const r = recogniseArtifact(file, text);
  if (!('reason' in r)) throw new Error(`expected a skipped input, got ${r.kind}`);
  return r;
}

async function run(argv: string[], cwd = REPO): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env: { ...process.env, LORETRACE_INDEX_DIR: '' }, cwd, isTTY: false });
  return { code, out, err };
}

// ---------------------------------------------------------------------------------------------
// A tiny hand-built index (no indexer involved): two notes in Lore/, one in Lore/Deep/.
//   Lore/A.md  1 "# A" 2 "" 3 "alpha one" 4 "alpha two" 5 "" 6 "## Sub" 7 "sub line"   (links → B, → Missing, → Dup)
//   Lore/B.md  1 "---" 2 "title: B" 3 "---" 4 "bee line" 5 "bee two"                     (link → A#Nope)
//   Lore/Deep/C.md 1 "see line"                                                          (no links)
function note(path: string, lines: string[], extra: Partial<NoteRecord> = {}): NoteRecord {
  return {
    path, title: path.replace(/^.*\//, '').replace(/\.md$/, ''), aliases: [], tags: [], frontmatter: null, frontmatter_lines: null,
    size: 0, sha256: 'x', line_count: lines.length, line_ending: 'lf', bom: false,
    classes: path.split('/').slice(0, -1).map((s) => s.toLowerCase()), headings: [], blocks: [], chunk_count: 0, ...extra,
  };
}
function chunk(path: string, i: number, start: number, lines: string[], heading: string[] = []): Chunk {
  return { path, chunk_index: i, heading_path: heading, line_start: start, line_end: start + lines.length - 1, text: lines.join('\n'), hash: 'h', word_count: 1 };
}
function link(source: string, line: number, target: string, resolution: LinkRecord['resolution']): LinkRecord {
  return { source_path: source, line, column: 1, chunk_index: 0, syntax: 'wikilink', position: 'prose', raw: `[[${target}]]`, target, fragment: null, display: null, resolution };
}
const A_LINES = ['# A', '', 'alpha one', 'alpha two', '', '## Sub', 'sub line'];
const B_LINES = ['---', 'title: B', '---', 'bee line', 'bee two'];
const HAND: VaultIndex = {
  schema_version: '1', namespace: 'Hand', root: '/nowhere', snapshot_id: 'snap-now', manifest: [], config: {}, findings: [],
  notes: [
    note('Lore/A.md', A_LINES, { chunk_count: 2, headings: [{ text: 'A', depth: 1, line: 1, chunk_index: 0 }, { text: 'Sub', depth: 2, line: 6, chunk_index: 1 }] }),
    note('Lore/B.md', B_LINES, { chunk_count: 1, frontmatter: { title: 'B' }, frontmatter_lines: { line_start: 1, line_end: 3 } }),
    note('Lore/Deep/C.md', ['see line'], { chunk_count: 1 }),
  ],
  chunks: [
    chunk('Lore/A.md', 0, 1, A_LINES.slice(0, 4), ['A']),
    chunk('Lore/A.md', 1, 6, A_LINES.slice(5), ['A', 'Sub']),
    chunk('Lore/B.md', 0, 4, B_LINES.slice(3)),
    chunk('Lore/Deep/C.md', 0, 1, ['see line']),
  ],
  links: [
    link('Lore/A.md', 3, 'B', { status: 'resolved', path: 'Lore/B.md' }),
    link('Lore/A.md', 4, 'Missing', { status: 'unresolved' }),
    link('Lore/A.md', 7, 'Dup', { status: 'ambiguous', path: 'Lore/Deep/C.md', candidates: ['Lore/Deep/C.md', 'Lore/B.md'] }),
    link('Lore/B.md', 4, 'A#Nope', { status: 'broken_fragment', path: 'Lore/A.md', fragment: 'Nope' }),
  ],
};
const HAND_LINES = new Map([['Lore/A.md', A_LINES], ['Lore/B.md', B_LINES], ['Lore/Deep/C.md', ['see line']]]);

describe('recogniseArtifact', () => {
  it('reads a responder packet by schema_version and splits a "; "-separated source_ref into its parts', () => {
    const a = art('p.json', {
      schema_version: 'ghostlight.responder_packet.v0',
      visible_context: { source_excerpts: [{ ref_id: 'x', source_ref: 'Hand:Lore/A.md; agents.sella_ren.memories.m1', text: 't' }] },
    });
    expect(a.kind).toBe('responder_packet');
    expect(a.refs).toEqual([
      { role: 'source_excerpt', pointer: '/visible_context/source_excerpts/0/source_ref', ref: 'Hand:Lore/A.md' },
      { role: 'source_excerpt', pointer: '/visible_context/source_excerpts/0/source_ref', ref: 'agents.sella_ren.memories.m1' },
    ]);
  });

  it('reads a capture\'s lore_access and keeps the verbatim text of runner_captured trace entries only', () => {
    const a = art('c.json', {
      schema_version: 'ghostlight.responder_output.v0',
      lore_access: {
        mode: 'responder_scoped_repository_search', consulted_refs: ['Hand:Lore/A.md'], followed_refs: ['Hand:Lore/B.md'],
        research_trace: [
          { trace_id: 't1', origin: 'runner_captured', source_ref: 'Hand:Lore/A.md#chunk0', source_path: 'Lore/A.md', chunk_index: 0, line_start: 3, line_end: 4, extracted_constraint: 'alpha one\nalpha two' },
          { trace_id: 't2', origin: 'responder_reported', source_ref: 'Hand:Lore/B.md', source_path: 'Lore/B.md', chunk_index: 0, line_start: 4, line_end: 4, extracted_constraint: 'paraphrase' },
        ],
      },
      raw_output: '{}',
    });
    expect(a.kind).toBe('responder_capture');
    expect(a.refs).toEqual([
      { role: 'consulted_ref', pointer: '/lore_access/consulted_refs/0', ref: 'Hand:Lore/A.md' },
      { role: 'followed_ref', pointer: '/lore_access/followed_refs/0', ref: 'Hand:Lore/B.md' },
      { role: 'research_trace', pointer: '/lore_access/research_trace/0', ref: 'Hand:Lore/A.md#chunk0', line_start: 3, line_end: 4, verbatim_text: 'alpha one\nalpha two' },
      { role: 'research_trace', pointer: '/lore_access/research_trace/1', ref: 'Hand:Lore/B.md', line_start: 4, line_end: 4 },
    ]);
  });

  it('recognises traverse results, capture fragments and lore-grounding digests by shape', () => {
    expect(art('t.json', { decisions: [], research_trace: [], source_excerpts: [], consulted_refs: ['Hand:Lore/A.md'] }).kind).toBe('traverse_result');
    expect(art('f.json', { mode: 'coordinator_scoped_retrieval', consulted_refs: [], snapshot_id: 's1' })).toEqual({ file: 'f.json', kind: 'capture_fragment', schema_version: null, snapshot_id: 's1', refs: [] });
    expect(art('d.json', { source_refs: [{ path: 'Lore/A.md', line_start: 3, line_end: 4 }] }).refs).toEqual([
      { role: 'digest_source_ref', pointer: '/source_refs/0', ref: 'Lore/A.md', line_start: 3, line_end: 4 },
    ]);
  });

  it('reads the lore_read results of a proxy ledger and ignores searches and refusals', () => {
    const lines = [
      { seq: 0, kind: 'session_start', session: { snapshot_id: 's0' }, prev_hash: '0', record_hash: 'a' },
      { seq: 1, kind: 'tool_call', tool: 'lore_read', outcome: { status: 'ok', returned: [{ ref: 'Hand:Lore/A.md#L3-L3', line_start: 3, line_end: 3, text: 'alpha one' }] }, prev_hash: 'a', record_hash: 'b' },
      { seq: 2, kind: 'tool_call', tool: 'lore_search', outcome: { status: 'ok', results: [{ ref: 'Hand:Lore/B.md#chunk0', line_start: 4, line_end: 5 }] }, prev_hash: 'b', record_hash: 'c' },
      { seq: 3, kind: 'tool_call', tool: 'lore_read', outcome: { status: 'refused', code: 'not_found', reason: 'hidden_ref', message: 'm' }, prev_hash: 'c', record_hash: 'd' },
    ].map((l) => JSON.stringify(l)).join('\n');
    expect(art('l.jsonl', lines)).toEqual({
      file: 'l.jsonl', kind: 'proxy_ledger', schema_version: null, snapshot_id: 's0',
      refs: [{ role: 'ledger_result', pointer: '/outcome/returned/0', record_line: 2, ref: 'Hand:Lore/A.md#L3-L3', line_start: 3, line_end: 3, verbatim_text: 'alpha one' }],
    });
  });

  it('skips a file that is not JSON, naming the line and column', () => {
    expect(skipped('bad.json', '{\n  "a": 1,\n  oops\n}')).toEqual({
      file: 'bad.json', reason: 'not_json',
      message: expect.stringMatching(/^bad\.json: not JSON at line 3, column 3: .*; expected a responder packet, responder output capture, loretrace traverse result, capture fragment, proxy ledger \(JSONL\), lore-grounding digest or Ghostlight corpus coverage ledger \(by schema_version or shape\)$/),
    });
  });

  it('skips a ledger line that is not JSON, naming the line', () => {
    expect(skipped('l.jsonl', '{"seq":0,"prev_hash":"0","record_hash":"a"}\nnot json\n').message).toMatch(/^l\.jsonl: line 2 is not a JSON record \(.*\); expected one JSON object per line$/);
  });

  it('skips known documents that carry no lore refs, and unrecognised JSON, with the reason', () => {
    expect(skipped('s.json', '{"$schema":"https://json-schema.org/draft/2020-12/schema"}')).toEqual({ file: 's.json', reason: 'no_lore_refs', message: 's.json: a JSON Schema document, not an artifact' });
    expect(skipped('x.json', '{"hello":1}')).toEqual({
      file: 'x.json', reason: 'unrecognised',
      message: 'x.json: unrecognised JSON (schema_version absent; keys hello); expected a responder packet, responder output capture, loretrace traverse result, capture fragment, proxy ledger (JSONL), lore-grounding digest or Ghostlight corpus coverage ledger (by schema_version or shape)',
    });
    expect(skipped('arr.json', '[1]').message).toBe('arr.json: top level is an array; expected a JSON object: a responder packet, responder output capture, loretrace traverse result, capture fragment, proxy ledger (JSONL), lore-grounding digest or Ghostlight corpus coverage ledger (by schema_version or shape)');
    expect(skipped('null.json', 'null').message).toMatch(/^null\.json: top level is null; expected a JSON object: /);
    expect(skipped('n.json', '42').message).toMatch(/^n\.json: top level is a number; expected a JSON object: /);
  });

  it('reads a ledger that holds only its session_start record, whatever the file is called', () => {
    const one = JSON.stringify({ schema_version: 'loretrace.ledger.v1', seq: 0, kind: 'session_start', session: { snapshot_id: 's0' }, prev_hash: '0', record_hash: 'a' });
    expect(art('ledger.json', one)).toEqual({ file: 'ledger.json', kind: 'proxy_ledger', schema_version: 'loretrace.ledger.v1', snapshot_id: 's0', refs: [] });
  });

  it('names a ledger by its lane: retrieve_ledger when its session\'s runner is retrieve, proxy_ledger for a serve session', () => {
    const ledger = (runner: string, mode: string) => [
      { schema_version: 'loretrace.ledger.v3', seq: 0, kind: 'SESSION_OPENED', session: { runner, mode, snapshot_id: 's0' }, prev_hash: '0', record_hash: 'a' },
      { schema_version: 'loretrace.ledger.v3', seq: 1, kind: 'TOOL_CALL', tool: 'read', arguments: { ref: 'Hand:Lore/A.md#L3-L3' }, prev_hash: 'a', record_hash: 'b' },
      { schema_version: 'loretrace.ledger.v3', seq: 2, kind: 'TOOL_RESULT', tool: 'read', call_record_id: 'x:1', outcome: { status: 'ok', served: [{ ref: 'Hand:Lore/A.md#L3-L3', line_start: 3, line_end: 3, text_sha256: 'f'.repeat(64) }] }, prev_hash: 'b', record_hash: 'c' },
    ].map((l) => JSON.stringify(l)).join('\n');
    const refs = [{ role: 'ledger_result', pointer: '/outcome/served/0', record_line: 3, ref: 'Hand:Lore/A.md#L3-L3', line_start: 3, line_end: 3, text_sha256: 'f'.repeat(64) }];
    expect(art('r.ledger.jsonl', ledger('retrieve', 'coordinator_scoped_retrieval'))).toEqual({ file: 'r.ledger.jsonl', kind: 'retrieve_ledger', schema_version: 'loretrace.ledger.v3', snapshot_id: 's0', refs });
    expect(art('s.jsonl', ledger('proxy', 'responder_scoped_repository_search'))).toEqual({ file: 's.jsonl', kind: 'proxy_ledger', schema_version: 'loretrace.ledger.v3', snapshot_id: 's0', refs });
  });
});

describe('coverageReport', () => {
  it('refuses arguments of the wrong shape with bad_options instead of a TypeError', () => {
    const call = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        const err = e as { name: string; code: string; message: string; exitCode: number };
        return { name: err.name, code: err.code, message: err.message, exitCode: err.exitCode };
      }
      return null;
    };
    const paths = ['some/path'] as unknown as CoverageArtifact[];
    expect(call(() => coverageReport(HAND, paths))).toEqual({
      name: 'LoretraceError', code: 'bad_options', exitCode: 2,
      message: 'coverageReport: artifacts[0] is the string "some/path"; expected one of the recognised artifacts ({ file, kind, schema_version, snapshot_id, refs }) as readArtifacts(...).artifacts returns them; pass file and folder paths to readArtifacts first',
    });
    expect(call(() => coverageReport(HAND, 'some/path' as unknown as CoverageArtifact[]))?.message).toBe(
      'coverageReport: artifacts must be an array of recognised artifacts ({ file, kind, schema_version, snapshot_id, refs }) as readArtifacts(...).artifacts returns them; pass file and folder paths to readArtifacts first (got the string "some/path")',
    );
    expect(call(() => coverageReport('lore' as unknown as VaultIndex, []))?.message).toBe('coverageReport: index must be a vault index as indexVault returns it (got the string "lore")');
    expect(call(() => coverageReport(HAND, [], { skipped: 'x' as unknown as SkippedInput[] }))?.message).toBe('coverageReport: options.skipped must be an array of skipped inputs (got the string "x")');
  });
  it('counts only cited line ranges as covered lines; a whole note, #chunkN or #Heading is "note cited", apart', () => {
    const r = coverageReport(HAND, [
      art('one.json', { mode: 'm', consulted_refs: ['Hand:Lore/A.md#Sub', 'Lore/B.md'], research_trace: [
        { origin: 'runner_captured', source_ref: 'Hand:Lore/A.md#chunk0', line_start: 3, line_end: 3, extracted_constraint: 'alpha one' },
      ] }),
    ], { noteLines: HAND_LINES });
    const rows = Object.fromEntries(r.notes.map((n) => [n.path, [n.citations, n.whole_citations, n.artifacts, n.covered_lines, n.body_lines, n.line_coverage, n.cited_ranges]]));
    // A: body lines 1,3,4,6,7 (5); only the trace entry cites lines (3) ⇒ 1 of 5; #Sub is a section: note cited.
    // B: frontmatter 1-3 excluded; body 4,5; the whole note is note cited ⇒ 0 of 2 lines.
    expect(rows).toEqual({
      'Lore/A.md': [2, 1, 1, 1, 5, 0.2, [[3, 3]]],
      'Lore/B.md': [1, 1, 1, 0, 2, 0, []],
      'Lore/Deep/C.md': [0, 0, 0, 0, 1, 0, []],
    });
    expect(r.citations.map((c) => [c.ref, c.line_start, c.line_end, c.cites, c.status, c.checked])).toEqual([
      ['Hand:Lore/A.md#Sub', 6, 7, 'section', 'ok', 'resolved_only'],
      ['Lore/B.md', 1, 5, 'note', 'ok', 'resolved_only'],
      ['Hand:Lore/A.md#chunk0', 3, 3, 'lines', 'ok', 'recorded_text'],
    ]);
    expect(r.totals).toMatchObject({ covered_lines: 1, body_lines: 8, whole_citations: 2, unverifiable_citations: 0 });
    expect(r.folders.map((f) => [f.folder, f.depth, f.notes, f.cited_notes, f.whole_citations, f.covered_lines, f.body_lines, f.line_coverage])).toEqual([
      ['Lore', 1, 3, 2, 2, 1, 8, 0.125],
      ['Lore/Deep', 2, 1, 0, 0, 0, 1, 0],
    ]);
    expect(r.classes.map((c) => [c.class, c.notes, c.cited_notes, c.never_cited])).toEqual([
      ['deep', 1, 0, ['Lore/Deep/C.md']],
      ['lore', 3, 2, ['Lore/Deep/C.md']],
    ]);
    expect(r.untouched_classes).toEqual(['deep']);
  });

  it('marks each kind of stale citation and leaves its lines uncovered', () => {
    const r = coverageReport(HAND, [
      art('old.json', { mode: 'm', snapshot_id: 'snap-old', consulted_refs: ['Hand:Lore/Gone.md', 'Hand:Lore/A.md#Nope', 'Hand:Lore/A.md#chunk9', 'Hand:Lore/A.md#L6-L99', 'Hand:Lore/B.md'],
        research_trace: [
          { origin: 'runner_captured', source_ref: 'Hand:Lore/A.md', line_start: 3, line_end: 4, extracted_constraint: 'alpha one\nalpha 2' },
          { origin: 'runner_captured', source_ref: 'Hand:Lore/A.md', line_start: 7, line_end: 7, extracted_constraint: 'sub line' },
          { origin: 'runner_captured', source_ref: 'Hand:Lore/A.md', line_start: 5, line_end: 4, extracted_constraint: 'x' },
        ] }),
    ], { noteLines: HAND_LINES });
    expect(r.citations.map((c) => [c.ref, c.status, c.detail])).toEqual([
      ['Hand:Lore/Gone.md', 'missing_path', 'no note Lore/Gone.md in vault Hand'],
      ['Hand:Lore/A.md#Nope', 'missing_fragment', 'no heading "Nope" in Lore/A.md'],
      ['Hand:Lore/A.md#chunk9', 'missing_fragment', 'Lore/A.md has 2 chunks (0..1), not chunk9'],
      ['Hand:Lore/A.md#L6-L99', 'range_beyond_eof', '#L6-L99: line 99 is past the end of Lore/A.md, which has 7 lines'],
      ['Hand:Lore/B.md', 'unverifiable', 'artifact records snapshot snap-old, vault is at snap-now, and no text or hash for these lines; the ref still resolves, but whether its lines changed cannot be told'],
      ['Hand:Lore/A.md', 'text_changed', 'Lore/A.md lines 3-4 no longer hold the recorded text (first difference at line 4)'],
      ['Hand:Lore/A.md', 'ok', undefined],
      ['Hand:Lore/A.md', 'invalid_range', 'cited lines 5-4: not a line range; expected 1 ≤ line_start ≤ line_end'],
    ]);
    expect(r.totals.stale_by_status).toEqual({ missing_path: 1, missing_fragment: 2, range_beyond_eof: 1, invalid_range: 1, text_changed: 1 });
    expect(r.totals.unverifiable_citations).toBe(1);
    expect(r.stale).toHaveLength(6);
    // Only the verified trace entry (line 7) covers anything; an old snapshot does not make it stale.
    expect(r.notes.map((n) => [n.path, n.citations, n.stale_citations, n.unverifiable_citations, n.covered_lines])).toEqual([
      ['Lore/A.md', 6, 5, 0, 1],
      ['Lore/B.md', 1, 0, 1, 0],
      ['Lore/Deep/C.md', 0, 0, 0, 0],
    ]);
    expect(r.citations[6]).toMatchObject({ status: 'ok', checked: 'recorded_text', cites: 'lines', line_start: 7, line_end: 7 });
    expect(r.artifacts[0]).toMatchObject({ snapshot_id: 'snap-old', snapshot_matches: false, lore_citations: 8, stale_citations: 6 });
  });

  it('counts refs into other namespaces, non-lore refs and refused refs apart', () => {
    const r = coverageReport(HAND, [
      art('p.json', { schema_version: 'ghostlight.responder_packet.v0', visible_context: { source_excerpts: [
        { source_ref: 'Other:Lore/A.md' },
        { source_ref: 'examples/projected-contexts/x.json#context.current_stakes; packet_prompt_text' },
        { source_ref: 'Hand:Lore/../etc.md' },
        { source_ref: 'https://example.com/a.md' },
      ] } }),
    ], { noteLines: HAND_LINES });
    expect(r.citations).toEqual([]);
    expect(r.other_namespace_refs).toEqual([{ artifact: 'p.json', pointer: '/visible_context/source_excerpts/0/source_ref', ref: 'Other:Lore/A.md', namespace: 'Other' }]);
    expect(r.non_lore_refs.map((x) => x.ref)).toEqual(['examples/projected-contexts/x.json#context.current_stakes', 'packet_prompt_text', 'https://example.com/a.md']);
    expect(r.rejected_refs).toEqual([{ artifact: 'p.json', pointer: '/visible_context/source_excerpts/2/source_ref', ref: 'Hand:Lore/../etc.md', detail: 'ref "Hand:Lore/../etc.md" is not a valid lore ref: it contains a ".." segment' }]);
    expect([r.totals.other_namespace_refs, r.totals.non_lore_refs, r.totals.rejected_refs, r.totals.lore_citations]).toEqual([1, 3, 1, 0]);
  });

  it('refuses entries that are not refs and ranges that are not integers, instead of dropping or widening them', () => {
    const r = coverageReport(HAND, [
      art('bad.json', { mode: 'm', consulted_refs: [null, 5, '  ', 'Hand:Lore/B.md'], followed_refs: 'Hand:Lore/A.md',
        research_trace: [null, { source_ref: 7 }, { source_ref: 'Hand:Lore/A.md', line_start: '3', line_end: 4 }, { source_ref: 'Hand:Lore/A.md', line_start: 2.5, line_end: 3 }, { source_ref: 'Hand:Lore/A.md', line_start: 3 }] }),
      art('d.json', { source_refs: [{ path: 'Lore/A.md', line_start: 3 }, { note: 'no path' }, 42] }),
      art('p.json', { schema_version: 'ghostlight.responder_packet.v0', visible_context: { source_excerpts: [{ ref_id: 'x', text: 't' }, 'Hand:Lore/A.md'] } }),
    ], { noteLines: HAND_LINES });
    expect(r.rejected_refs.map((x) => [x.artifact, x.pointer, x.ref, x.detail])).toEqual([
      ['bad.json', '/consulted_refs/0', 'null', 'consulted_refs item is null; expected a lore ref string'],
      ['bad.json', '/consulted_refs/1', '5', 'consulted_refs item is a number; expected a lore ref string'],
      ['bad.json', '/consulted_refs/2', '"  "', 'consulted_refs item is an empty string; expected a lore ref string'],
      ['bad.json', '/followed_refs', '"Hand:Lore/A.md"', 'followed_refs is a string; expected an array'],
      ['bad.json', '/research_trace/0', 'null', 'research_trace entry is null; expected an object with source_ref'],
      ['bad.json', '/research_trace/1', '{"source_ref":7}', 'research_trace entry has no source_ref or source_path string (source_ref is a number)'],
      ['d.json', '/source_refs/1', '{"note":"no path"}', 'source_refs item has no path (path is absent); expected { path, line_start, line_end }'],
      ['d.json', '/source_refs/2', '42', 'source_refs item is a number; expected { path, line_start, line_end }'],
      ['p.json', '/visible_context/source_excerpts/0/source_ref', 'absent', 'source excerpt without a ref: source_ref is absent; expected a source_ref string'],
      ['p.json', '/visible_context/source_excerpts/1', '"Hand:Lore/A.md"', 'source excerpt without a ref: the excerpt is a string; expected a source_ref string'],
    ]);
    expect(r.citations.map((c) => [c.artifact, c.pointer, c.line_start, c.line_end, c.status, c.detail])).toEqual([
      ['bad.json', '/consulted_refs/3', 1, 5, 'ok', undefined],
      ['bad.json', '/research_trace/2', null, null, 'invalid_range', 'line_start "3", line_end 4: not a line range; expected integers 1 ≤ line_start ≤ line_end'],
      ['bad.json', '/research_trace/3', null, null, 'invalid_range', 'line_start 2.5, line_end 3: not a line range; expected integers 1 ≤ line_start ≤ line_end'],
      ['bad.json', '/research_trace/4', null, null, 'invalid_range', 'line_start 3, line_end absent: not a line range; expected integers 1 ≤ line_start ≤ line_end'],
      // A digest's lone line_start is that one line.
      ['d.json', '/source_refs/0', 3, 3, 'ok', undefined],
    ]);
    expect(r.artifacts.map((a) => [a.file, a.lore_citations, a.stale_citations, a.rejected_refs])).toEqual([['bad.json', 4, 3, 6], ['d.json', 1, 0, 2], ['p.json', 0, 0, 2]]);
    // Only sound line citations cover lines: A line 3 (the digest's); B is cited as a whole note.
    expect(r.totals.covered_lines).toBe(1);
    expect(r.totals.whole_citations).toBe(1);
    expect(validateReport(r), JSON.stringify(validateReport.errors)).toBe(true);
  });

  it('lists unresolved, ambiguous and broken-fragment links and orphan notes', () => {
    const r = coverageReport(HAND, [], { noteLines: HAND_LINES });
    expect(r.gaps).toEqual({
      unresolved_links: [{ source_path: 'Lore/A.md', line: 4, column: 1, raw: '[[Missing]]', target: 'Missing' }],
      ambiguous_links: [{ source_path: 'Lore/A.md', line: 7, column: 1, raw: '[[Dup]]', target: 'Dup', resolved_to: 'Lore/Deep/C.md', candidates: ['Lore/B.md', 'Lore/Deep/C.md'] }],
      broken_fragments: [{ source_path: 'Lore/B.md', line: 4, column: 1, raw: '[[A#Nope]]', path: 'Lore/A.md', fragment: 'Nope' }],
      orphan_notes: [],
    });
    expect(r.notes.map((n) => n.inbound_links)).toEqual([1, 1, 1]);
    const lonely = coverageReport({ ...HAND, links: HAND.links.slice(0, 2) }, [], { noteLines: HAND_LINES });
    expect(lonely.gaps.orphan_notes).toEqual(['Lore/A.md', 'Lore/Deep/C.md']);
  });

  it('rebuilds lines from chunks when noteLines is not given', () => {
    const r = coverageReport(HAND, [art('a.json', { mode: 'm', consulted_refs: ['Hand:Lore/B.md'] })]);
    const line = coverageReport(HAND, [art('a.json', { source_refs: [{ path: 'Lore/B.md', line_start: 4, line_end: 5 }] })]);
    expect(line.notes.map((n) => [n.path, n.body_lines, n.covered_lines])).toEqual([['Lore/A.md', 5, 0], ['Lore/B.md', 2, 2], ['Lore/Deep/C.md', 1, 0]]);
    expect(r.notes.map((n) => [n.path, n.body_lines, n.whole_citations])).toEqual([['Lore/A.md', 5, 0], ['Lore/B.md', 2, 1], ['Lore/Deep/C.md', 1, 0]]);
  });

  it('produces a report that validates against schemas/coverage-report.schema.json', () => {
    const r = coverageReport(HAND, [art('a.json', { mode: 'm', consulted_refs: ['Hand:Lore/B.md', 'Hand:Lore/Gone.md', 'x'] })], {
      noteLines: HAND_LINES, skipped: [{ file: 'z.json', reason: 'not_json', message: 'z.json: not JSON' }],
    });
    expect(validateReport(r), JSON.stringify(validateReport.errors)).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// The project's fixture vault with the artifacts in lore-fixtures/artifacts (figures on Coverage/ notes).
describe('coverageReport on lore-fixtures', () => {
  let report: CoverageReport;
  let index: VaultIndex;
  beforeAll(async () => {
    index = await indexVault(FIXTURE_VAULT, { persist: false });
    const { artifacts, skipped } = await readArtifacts(['lore-fixtures/artifacts'], { cwd: REPO });
    report = coverageReport(index, artifacts, { noteLines: await loadNoteLines(index), skipped });
  });

  it('reads every artifact kind and skips the file that is not JSON', () => {
    expect(report.artifacts.map((a) => [a.file, a.kind, a.lore_citations, a.stale_citations, a.non_lore_refs, a.other_namespace_refs, a.rejected_refs, a.snapshot_matches])).toEqual([
      ['lore-fixtures/artifacts/bad/other-namespace.packet.json', 'responder_packet', 0, 0, 0, 1, 1, null],
      ['lore-fixtures/artifacts/bad/range-past-eof.digest.json', 'lore_grounding_digest', 2, 2, 0, 0, 0, null],
      ['lore-fixtures/artifacts/capture.harbor.json', 'responder_capture', 4, 1, 1, 0, 0, null],
      ['lore-fixtures/artifacts/digest.harbor.json', 'lore_grounding_digest', 2, 0, 0, 0, 0, null],
      ['lore-fixtures/artifacts/fragment.harbor.json', 'capture_fragment', 3, 1, 0, 0, 0, null],
      ['lore-fixtures/artifacts/ledger.harbor.jsonl', 'proxy_ledger', 1, 0, 0, 0, 0, false],
      ['lore-fixtures/artifacts/packet.harbor.json', 'responder_packet', 3, 1, 2, 0, 0, null],
      ['lore-fixtures/artifacts/traverse.harbor.json', 'traverse_result', 3, 0, 0, 0, 0, false],
    ]);
    expect(report.skipped).toEqual([{
      file: 'lore-fixtures/artifacts/bad/not-json.json', reason: 'not_json',
      message: expect.stringMatching(/^lore-fixtures\/artifacts\/bad\/not-json\.json: not JSON( at line 1, column \d+)?: .*; expected a responder packet/),
    }]);
  });

  it('gives the exact totals of the fixture artifacts', () => {
    const t = report.totals;
    expect([t.artifacts, t.skipped_inputs, t.lore_citations, t.cited_notes, t.stale_citations, t.non_lore_refs, t.other_namespace_refs, t.rejected_refs]).toEqual([8, 1, 18, 3, 5, 3, 1, 1]);
    expect(t.stale_by_status).toEqual({ missing_path: 1, missing_fragment: 1, range_beyond_eof: 1, invalid_range: 1, text_changed: 1 });
    // The traverse result records an old snapshot: its excerpt and trace entry carry text that still matches (not stale);
    // its bare consulted ref carries nothing to compare (unverifiable, not stale).
    expect([t.unverifiable_citations, t.whole_citations, t.covered_lines]).toEqual([1, 3, 9]);
    expect(t.never_cited_notes).toBe(t.notes - 3);
  });

  it('gives exact per-note figures for the Coverage/ notes', () => {
    const rows = report.notes.filter((n) => n.path.startsWith('Coverage/')).map((n) => [n.path, n.citations, n.whole_citations, n.unverifiable_citations, n.artifacts, n.stale_citations, n.covered_lines, n.body_lines, n.line_coverage, n.cited_ranges, n.inbound_links]);
    expect(rows).toEqual([
      // Only stale citations: range past EOF, invalid range, text changed.
      ['Coverage/Archive/Old Pier.md', 3, 0, 0, 2, 3, 0, 3, 0, [], 1],
      // Lines: 5 (ledger), 9-10 (trace), 14-15 (the digest, and the packet excerpt located in #chunk2), 20 (the traverse
      // result's excerpt and trace). #Berth Rules is a whole section: note cited, not lines. Lines 7, 12, 16, 18 never.
      ['Coverage/Harbor Ledger.md', 8, 1, 0, 5, 1, 6, 10, 0.6, [[5, 5], [9, 10], [14, 15], [20, 20]], 1],
      ['Coverage/Lonely Reef.md', 0, 0, 0, 0, 0, 0, 2, 0, [], 0],
      // Lines 3-4 (#L3-L4, trace), 8 (digest); the whole note and #Members are note cited; #chunk0 of the old snapshot unverifiable.
      ['Coverage/Tide Court.md', 6, 2, 1, 5, 0, 3, 6, 0.5, [[3, 4], [8, 8]], 1],
    ]);
    const folder = report.folders.find((f) => f.folder === 'Coverage');
    expect(folder).toEqual({ folder: 'Coverage', depth: 1, notes: 4, cited_notes: 3, citations: 17, whole_citations: 3, unverifiable_citations: 1, artifacts: 7, stale_citations: 4, body_lines: 21, covered_lines: 9, line_coverage: 0.4286 });
    const cls = report.classes.find((c) => c.class === 'coverage');
    expect(cls?.never_cited).toEqual(['Coverage/Lonely Reef.md']);
    expect(report.classes.find((c) => c.class === 'archive')).toMatchObject({ notes: 1, cited_notes: 1, covered_lines: 0, line_coverage: 0, never_cited: [] });
  });

  it('lists every stale citation with where it stands and what is wrong', () => {
    expect(report.stale.map((c) => [c.artifact.replace('lore-fixtures/artifacts/', ''), c.pointer, c.ref, c.line_start, c.line_end, c.status, c.detail])).toEqual([
      ['bad/range-past-eof.digest.json', '/source_refs/0', 'Coverage/Archive/Old Pier.md', 3, 40, 'range_beyond_eof', 'cited lines 3-40: line 40 is past the end of Coverage/Archive/Old Pier.md, which has 4 lines'],
      ['bad/range-past-eof.digest.json', '/source_refs/1', 'Coverage/Archive/Old Pier.md', null, null, 'invalid_range', 'cited lines 4-2: not a line range; expected 1 ≤ line_start ≤ line_end'],
      ['capture.harbor.json', '/lore_access/research_trace/1', 'FixtureLore:Coverage/Archive/Old Pier.md#chunk0', 3, 3, 'text_changed', 'Coverage/Archive/Old Pier.md lines 3-3 no longer hold the recorded text (first difference at line 3)'],
      ['fragment.harbor.json', '/followed_refs/0', 'FixtureLore:Coverage/Drowned Quay.md', null, null, 'missing_path', 'no note Coverage/Drowned Quay.md in vault FixtureLore'],
      ['packet.harbor.json', '/visible_context/source_excerpts/3/source_ref', 'FixtureLore:Coverage/Harbor Ledger.md#Harbour Fees', null, null, 'missing_fragment', 'no heading "Harbour Fees" in Coverage/Harbor Ledger.md'],
    ]);
    expect(report.citations.filter((c) => c.artifact.endsWith('traverse.harbor.json')).map((c) => [c.pointer, c.line_start, c.line_end, c.cites, c.status, c.checked, c.detail])).toEqual([
      // The excerpt's text "Rescue craft pay no dues." is located at line 20 of #chunk3 (lines 18-20).
      ['/source_excerpts/0/source_ref', 20, 20, 'lines', 'ok', 'excerpt_text', undefined],
      ['/consulted_refs/0', 1, 4, 'section', 'unverifiable', 'none', expect.stringMatching(/^artifact records snapshot 000000000000, vault is at [0-9a-f]{12}, and no text or hash for these lines; the ref still resolves, but whether its lines changed cannot be told$/)],
      ['/research_trace/0', 20, 20, 'lines', 'ok', 'recorded_text', undefined],
    ]);
  });

  it('counts the other-namespace ref and the refused ".." ref apart', () => {
    expect(report.other_namespace_refs).toEqual([{ artifact: 'lore-fixtures/artifacts/bad/other-namespace.packet.json', pointer: '/visible_context/source_excerpts/0/source_ref', ref: 'OtherLore:Places/Harbor.md#Docks', namespace: 'OtherLore' }]);
    expect(report.rejected_refs.map((r) => [r.ref, r.detail])).toEqual([['FixtureLore:Coverage/../Secrets.md', 'ref "FixtureLore:Coverage/../Secrets.md" is not a valid lore ref: it contains a ".." segment']]);
  });

  it('reports the planted unresolved link with its source line and the orphan note', () => {
    expect(report.gaps.unresolved_links).toContainEqual({ source_path: 'Coverage/Harbor Ledger.md', line: 16, column: 33, raw: '[[Missing Harbor Charter]]', target: 'Missing Harbor Charter' });
    expect(report.gaps.orphan_notes).toContain('Coverage/Lonely Reef.md');
    expect(report.gaps.orphan_notes.filter((p) => p.startsWith('Coverage/'))).toEqual(['Coverage/Lonely Reef.md']);
  });

  it('is deterministic and schema-valid', async () => {
    expect(validateReport(report), JSON.stringify(validateReport.errors)).toBe(true);
    const again = await readArtifacts(['lore-fixtures/artifacts', 'lore-fixtures/artifacts/capture.harbor.json'], { cwd: REPO });
    const r2 = coverageReport(index, again.artifacts, { noteLines: await loadNoteLines(index), skipped: again.skipped });
    expect(JSON.stringify(r2)).toBe(JSON.stringify(report));
    expect(renderCoverageHtml(r2)).toBe(renderCoverageHtml(report));
  });
});

describe('readArtifacts', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'loretrace-cov-'));
    mkdirSync(join(dir, 'empty'));
    mkdirSync(join(dir, 'mixed'));
    writeFileSync(join(dir, 'mixed', 'notes.txt'), 'hello');
    writeFileSync(join(dir, 'mixed', 'frag.json'), '\uFEFF{"mode":"m","consulted_refs":["Hand:Lore/A.md"]}');
    writeFileSync(join(dir, 'latin1.json'), Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x7d]));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reports an empty folder, a missing input, a non-JSON extension and a non-UTF-8 file as skipped entries', async () => {
    const r = await readArtifacts(['empty', 'nope.json', 'mixed', 'latin1.json'], { cwd: dir });
    expect(r.artifacts.map((a) => [a.file, a.kind, a.refs.length])).toEqual([['mixed/frag.json', 'capture_fragment', 1]]);
    expect(r.skipped).toEqual([
      { file: 'empty', reason: 'empty_folder', message: 'empty: folder holds no files; expected artifact files (*.json, *.jsonl)' },
      { file: 'latin1.json', reason: 'unreadable', message: 'latin1.json: cannot be read (not valid UTF-8); expected a UTF-8 JSON file' },
      { file: 'mixed/notes.txt', reason: 'unsupported_extension', message: 'mixed/notes.txt: not a .json or .jsonl file; name it on the command line to read it anyway' },
      { file: 'nope.json', reason: 'not_found', message: 'nope.json: no such file or folder; expected an artifact file or a folder of artifacts' },
    ]);
  });

  it('names files as the inputs were written, so the names do not depend on the working directory', async () => {
    const fromDir = await readArtifacts(['./mixed/../mixed/', join(dir, 'mixed', 'frag.json')], { cwd: dir });
    // The same file named twice is read once, under its first name.
    expect(fromDir.artifacts.map((a) => a.file)).toEqual(['mixed/frag.json']);
    expect(fromDir.skipped.map((s) => s.file)).toEqual(['mixed/notes.txt']);
    const abs = (cwd: string) => readArtifacts([join(dir, 'mixed'), join(dir, 'gone')], { cwd });
    const [a, b] = [await abs(dir), await abs(tmpdir())];
    expect(a).toEqual(b);
    expect(a.artifacts.map((x) => x.file)).toEqual([`${dir}/mixed/frag.json`]);
    expect(a.skipped.map((x) => [x.file, x.reason])).toEqual([[`${dir}/gone`, 'not_found'], [`${dir}/mixed/notes.txt`, 'unsupported_extension']]);
  });
});

describe('renderCoverageMarkdown', () => {
  it('renders totals, stale citations and gaps as tables, with zeros shown', () => {
    const r = coverageReport(HAND, [art('a|b.json', { mode: 'm', consulted_refs: ['Hand:Lore/B.md', 'Hand:Lore/Gone.md'] })], { noteLines: HAND_LINES });
    const md = renderCoverageMarkdown(r);
    expect(md.startsWith('# Lore coverage: Hand\n\nVault snapshot `snap-now` · report `loretrace.coverage_report.v2`\n\n## Totals\n\n| figure | value |\n| --- | ---: |\n| notes | 3 |\n| notes cited at all | 1 (33.3%) |\n')).toBe(true);
    // B is cited as a whole note: note cited, no lines covered.
    expect(md).toContain('| line coverage (non-blank body lines inside cited line ranges) | 0 / 8 (0.0%) |');
    expect(md).toContain('| whole-note and whole-section citations ("note cited", not lines) | 1 |');
    expect(md).toContain('| Lore/B.md | 1 | 1 | 1 | 0 | 0 / 2 | 0.0% | – | 1 |');
    expect(md).toContain('|   stale: text_changed | 0 |');
    expect(md).toContain('| a\\|b.json /consulted_refs/1 | Hand:Lore/Gone.md | – | missing_path | no note Lore/Gone.md in vault Hand |');
    expect(md).toContain('| Lore/A.md:4:1 | [[Missing]] | Missing |');
    expect(md).toContain('## Skipped inputs\n\n_none_\n');
    expect(md).toContain('- `deep` (1 of 1): `Lore/Deep/C.md`');
  });
});

describe('renderCoverageHtml', () => {
  it('writes one self-contained page with one bar per class and per folder and escaped text', () => {
    const r = coverageReport({ ...HAND, notes: HAND.notes.map((n, i) => (i === 0 ? { ...n, title: '<script>x</script>' } : n)) },
      [art('<b>.json', { mode: 'm', consulted_refs: ['Hand:Lore/B.md', 'Hand:Lore/<i>.md'] })], { noteLines: HAND_LINES });
    const html = renderCoverageHtml(r);
    expect(html.match(/<rect class="bar"/g)).toHaveLength(r.classes.length + r.folders.length);
    expect(html).not.toMatch(/<(link|img|iframe|object|embed)\b/i);
    expect(html).not.toMatch(/\b(src|href)=/i);
    expect(html).not.toMatch(/@import|url\(/);
    expect(html).not.toContain('<b>.json');
    expect(html).toContain('&lt;b&gt;.json');
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"`);
    expect((html.match(/<script>/g) ?? []).length).toBe(1);
  });

  it('shows each cited note with its cited lines marked, most cited first, and a link graph of the cited notes and their neighbours', () => {
    const r = coverageReport(HAND, [
      art('one.json', { mode: 'm', consulted_refs: ['Hand:Lore/B.md'], research_trace: [
        { origin: 'runner_captured', source_ref: 'Hand:Lore/A.md#chunk0', line_start: 3, line_end: 4, extracted_constraint: 'alpha one\nalpha two' },
        { origin: 'runner_captured', source_ref: 'Hand:Lore/A.md#chunk1', line_start: 7, line_end: 7, extracted_constraint: 'sub line' },
      ] }),
    ], { noteLines: HAND_LINES });
    const html = renderCoverageHtml(r, { noteLines: HAND_LINES, index: HAND });
    const cited = [...html.matchAll(/<details class="cnote" data-path="([^"]+)"/g)].map((m) => m[1]);
    expect(cited).toEqual(['Lore/A.md', 'Lore/B.md']);
    // A: lines 3-4 and 7 cited; with two lines of context that is lines 1-7, all shown, three marked.
    const a = html.slice(html.indexOf('data-path="Lore/A.md"'), html.indexOf('data-path="Lore/B.md"'));
    expect([...a.matchAll(/<li value="(\d+)"( class="cited")?>/g)].map((m) => [Number(m[1]), m[2] !== undefined])).toEqual([
      [1, false], [2, false], [3, true], [4, true], [5, false], [6, false], [7, true],
    ]);
    expect(html).toContain('note cited ×1');
    expect(html).toContain('cited only as a whole note or section: no lines are marked');
    // Graph: A and B cited (inner ring), C a never-cited neighbour.
    expect([...html.matchAll(/<g class="node (cited|uncited)" data-path="([^"]+)"/g)].map((m) => [m[2], m[1]])).toEqual([
      ['Lore/A.md', 'cited'], ['Lore/B.md', 'cited'], ['Lore/Deep/C.md', 'uncited'],
    ]);
    // A → B, A → C (the ambiguous [[Dup]]), B → A (the broken [[A#Nope]] still reaches A).
    expect(html.match(/<line x1=/g)).toHaveLength(3);
    // The gaps come before the cited notes, which come before the charts.
    expect(html.indexOf('id="todo"')).toBeLessThan(html.indexOf('id="cited"'));
    expect(html.indexOf('id="cited"')).toBeLessThan(html.indexOf('id="charts"'));
    expect(html).toContain('<code>Lore/A.md:4</code> [[Missing]]');
  });

  it('folds away classes that only repeat a folder name', () => {
    const r = coverageReport({ ...HAND, notes: HAND.notes.map((n) => ({ ...n, classes: [...n.classes, 'tagged'] })) }, [], { noteLines: HAND_LINES });
    expect([...folderOnlyClasses(r)].sort()).toEqual(['deep', 'lore']);
    const html = renderCoverageHtml(r);
    const own = html.slice(html.indexOf('id="chart-classes-own"'));
    expect([...own.slice(0, own.indexOf('</svg>')).matchAll(/<rect class="bar" data-key="([^"]+)"/g)].map((m) => m[1])).toEqual(['tagged']);
    expect(html).toContain('fold away the 2 classes that only repeat a folder name');
  });
});

describe('loretrace coverage', () => {
  let out: string;
  beforeAll(() => {
    out = mkdtempSync(join(tmpdir(), 'loretrace-cov-out-'));
  });
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('writes coverage.json, coverage.md and coverage.html and exits 1 when citations are stale', async () => {
    const r = await run(['coverage', '--lore', 'lore-fixtures/FixtureLore', 'lore-fixtures/artifacts', '--out', join(out, 'a'), '--index-dir', join(out, 'idx')]);
    // Exit 1 says why on stderr: the stale citations and the named inputs that could not be used, each with the first.
    expect(r.err).toBe(`loretrace: coverage exits 1: 5 stale citations (first: lore-fixtures/artifacts/bad/range-past-eof.digest.json /source_refs/0: Coverage/Archive/Old Pier.md is range_beyond_eof); 1 input could not be used (first: [not_json] lore-fixtures/artifacts/bad/not-json.json: not JSON at line 1, column 1: expected a JSON value, found "t"; expected a responder packet, responder output capture, loretrace traverse result, capture fragment, proxy ledger (JSONL), lore-grounding digest or Ghostlight corpus coverage ledger (by schema_version or shape)); the report was written all the same\n`);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^coverage of FixtureLore \(snapshot [0-9a-f]{12}\)\n  artifacts read     8 \(skipped 1\)\n  lore citations     18 \(stale 5, unverifiable 1; counted apart: 3 non-lore, 1 other namespace, 1 refused\)\n  notes cited        3 of 54 \(3 whole-note or section citations; line coverage 3\.0%: 9 of 296 body lines in cited ranges\)\n/);
    expect(r.out).toContain('  skipped [not_json] lore-fixtures/artifacts/bad/not-json.json: not JSON');
    const json = JSON.parse(readFileSync(join(out, 'a', 'coverage.json'), 'utf8')) as CoverageReport;
    expect(validateReport(json)).toBe(true);
    expect(json.totals.lore_citations).toBe(18);
    expect(readFileSync(join(out, 'a', 'coverage.md'), 'utf8')).toBe(renderCoverageMarkdown(json));
    const html = readFileSync(join(out, 'a', 'coverage.html'), 'utf8');
    expect(html).toContain('<details class="cnote" data-path="Coverage/Harbor Ledger.md" open>');
    expect(html).toContain('<li value="20" class="cited">Rescue craft pay no dues.</li>');
    expect(html).toContain('id="link-graph"');
  });

  it('prints a JSON summary with --json and exits 0 when every citation holds', async () => {
    const r = await run(['coverage', '--lore', 'lore-fixtures/FixtureLore', 'lore-fixtures/artifacts/digest.harbor.json', 'lore-fixtures/artifacts/ledger.harbor.jsonl', '--out', join(out, 'b'), '--json', '--index-dir', join(out, 'idx')]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const s = JSON.parse(r.out);
    expect(Object.keys(s)).toEqual(['schema_version', 'namespace', 'snapshot_id', 'files', 'totals', 'untouched_classes', 'skipped']);
    expect([s.totals.artifacts, s.totals.lore_citations, s.totals.stale_citations, s.totals.cited_notes]).toEqual([2, 3, 0, 2]);
    expect(existsSync(join(out, 'b', 'coverage.html'))).toBe(true);
  });

  it('reports an empty artifact folder as a skipped input and exits 1', async () => {
    mkdirSync(join(out, 'nothing'));
    const r = await run(['coverage', '--lore', 'lore-fixtures/FixtureLore', join(out, 'nothing'), '--out', join(out, 'c'), '--json', '--index-dir', join(out, 'idx')]);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`loretrace: coverage exits 1: 1 input could not be used (first: [empty_folder] ${join(out, 'nothing')}: folder holds no files; expected artifact files (*.json, *.jsonl)); the report was written all the same\n`);
    const s = JSON.parse(r.out);
    expect(s.skipped).toEqual([{ file: expect.stringMatching(/nothing$/), reason: 'empty_folder', message: expect.stringMatching(/nothing: folder holds no files; expected artifact files \(\*\.json, \*\.jsonl\)$/) }]);
    expect(s.totals.artifacts).toBe(0);
  });

  it('a run folder: unknown JSON found inside it is counted apart (not_an_artifact, exit 0), the same file named is unrecognised (exit 1)', async () => {
    const run1 = join(out, 'run');
    mkdirSync(run1);
    writeFileSync(join(run1, 'session.mcp.jsonl'), '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    writeFileSync(join(run1, 'notes.json'), '{"hello":1}\n');
    const raw = { responder_agent_id: 'mara_voss', action_label: 'a', visible_action: 'v', spoken_text: 's', private_interpretation: 'p', intended_effect: 'e', state_update_candidates: [], relationship_update_candidates: [], unresolved_hooks: [], consulted_refs: ['FixtureLore:Coverage/Harbor Ledger.md'] };
    writeFileSync(join(run1, 'raw.json'), JSON.stringify(raw));
    writeFileSync(join(run1, 'runner.key.pem'), 'x');
    copyFileSync(join(REPO, 'lore-fixtures', 'artifacts', 'digest.harbor.json'), join(run1, 'digest.harbor.json'));
    const r = await run(['coverage', '--lore', 'lore-fixtures/FixtureLore', run1, '--out', join(out, 'run-cov'), '--index-dir', join(out, 'idx')]);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.out).toContain(`  not counted        4 files (no_lore_refs 1, not_an_artifact 2, unsupported_extension 1), listed in ${join(out, 'run-cov')}/coverage.md\n`);
    expect(r.out).not.toContain('skipped [');
    const json = JSON.parse(readFileSync(join(out, 'run-cov', 'coverage.json'), 'utf8')) as CoverageReport;
    expect(json.totals.artifacts).toBe(1);
    expect(json.skipped).toEqual([
      { file: `${run1}/notes.json`, reason: 'not_an_artifact', message: `${run1}/notes.json: unrecognised JSON (schema_version absent; keys hello); not a loretrace or Ghostlight artifact, found in a folder: not counted (name it on the command line to have it checked)` },
      { file: `${run1}/raw.json`, reason: 'no_lore_refs', message: `${run1}/raw.json: a responder raw output (the fields of the packet's output contract): its lore claims are counted from the capture \`loretrace capture\` builds from it; pass the capture` },
      { file: `${run1}/runner.key.pem`, reason: 'unsupported_extension', message: `${run1}/runner.key.pem: not a .json or .jsonl file; name it on the command line to read it anyway` },
      { file: `${run1}/session.mcp.jsonl`, reason: 'not_an_artifact', message: `${run1}/session.mcp.jsonl: JSONL records without seq/prev_hash/record_hash; not a loretrace or Ghostlight artifact, found in a folder: not counted (name it on the command line to have it checked)` },
    ]);
    const named = await run(['coverage', '--lore', 'lore-fixtures/FixtureLore', join(run1, 'notes.json'), join(run1, 'raw.json'), '--out', join(out, 'run-cov2'), '--json', '--index-dir', join(out, 'idx')]);
    expect(named.code).toBe(1);
    expect(named.err).toBe(`loretrace: coverage exits 1: 1 input could not be used (first: [unrecognised] ${run1}/notes.json: unrecognised JSON (schema_version absent; keys hello); expected a responder packet, responder output capture, loretrace traverse result, capture fragment, proxy ledger (JSONL), lore-grounding digest or Ghostlight corpus coverage ledger (by schema_version or shape)); the report was written all the same\n`);
    expect(JSON.parse(named.out).skipped.map((x: { reason: string }) => x.reason)).toEqual(['unrecognised', 'no_lore_refs']);
  });

  it('counts one lookup once across the files of a run, and a whole-note or section read as note cited, not lines', async () => {
    // A research run (serve --mcp: a whole-note and a #Heading lore_read; ledger export) and a coordinator run
    // (retrieve: packet, its ledger, its capture fragment), all on FixtureLore.
    const dir = join(out, 'runs');
    mkdirSync(dir);
    const transcript = [
      ...readFileSync(join(REPO, 'lore-fixtures', 'captures', 'dock-warden-ilse.research.mcp.jsonl'), 'utf8').split('\n').slice(0, 2),
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"lore_read","arguments":{"ref":"FixtureLore:World/Pre-Elysium/Territories.md"}}}',
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"lore_read","arguments":{"ref":"FixtureLore:World/Pre-Elysium/Factions/index.md#Movements"}}}',
    ].join('\n') + '\n';
    execFileSync(process.execPath, [join(REPO, 'bin', 'loretrace.js'), 'serve', '--lore', FIXTURE_VAULT, '--packet', join(REPO, 'lore-fixtures', 'packets', 'proxy-fixture-research.packet.json'), '--ledger', join(dir, 'session.jsonl'), '--mcp'], { input: transcript, stdio: ['pipe', 'ignore', 'ignore'] });
    expect((await run(['ledger', 'export', join(dir, 'session.jsonl'), '--lore', FIXTURE_VAULT, '--out', join(dir, 'fragment.json')])).code).toBe(0);
    const P = join(REPO, 'lore-fixtures', 'packets');
    expect((await run(['retrieve', '--lore', FIXTURE_VAULT, '--packet', join(P, 'brinefall-intake.turn-01.mara-voss.draft.packet.json'), '--projected-context', join(P, 'brinefall-intake.turn-01.mara-voss.projected-context.json'), '--policy', join(P, 'brinefall-intake.policy.json'), '--out', join(dir, 'run', 'packet.json'), '--capture-out', join(dir, 'run', 'lore_access.json')])).code).toBe(0);
    const r = await run(['coverage', '--lore', FIXTURE_VAULT, dir, '--out', join(out, 'runs-cov'), '--index-dir', join(out, 'idx')]);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.out).toContain('  lore citations     6 (stale 0, unverifiable 0; 17 more repeat a lookup, counted once; counted apart: 1 non-lore, 0 other namespace, 0 refused)\n');
    expect(r.out).toContain('  notes cited        6 of 54 (3 whole-note or section citations; line coverage 1.4%: 4 of 296 body lines in cited ranges)\n');
    const json = JSON.parse(readFileSync(join(out, 'runs-cov', 'coverage.json'), 'utf8')) as CoverageReport;
    expect(validateReport(json)).toBe(true);
    expect([json.totals.lore_citations, json.totals.repeated_citations, json.citations.length]).toEqual([6, 17, 23]);
    const row = (path: string) => json.notes.find((n) => n.path === path)!;
    const figures = (path: string) => { const n = row(path); return [n.citations, n.whole_citations, n.covered_lines, n.artifacts, n.cited_ranges]; };
    // One whole-note lore_read (three chunks served; the ledger, the fragment's trace and consulted_refs): one note citation, no line covered.
    expect(figures('World/Pre-Elysium/Territories.md')).toEqual([1, 1, 0, 2, []]);
    expect(json.citations.filter((c) => c.path === 'World/Pre-Elysium/Territories.md').map((c) => [c.artifact.slice(dir.length + 1), c.role, c.cites, c.repeat ?? false])).toEqual([
      ['fragment.json', 'consulted_ref', 'note', true],
      ['fragment.json', 'research_trace', 'note', false],
      ['fragment.json', 'research_trace', 'note', true],
      ['fragment.json', 'research_trace', 'note', true],
      ['session.jsonl', 'ledger_result', 'note', true],
      ['session.jsonl', 'ledger_result', 'note', true],
      ['session.jsonl', 'ledger_result', 'note', true],
    ]);
    // A #Heading read is a section citation.
    expect(figures('World/Pre-Elysium/Factions/index.md')).toEqual([1, 1, 0, 2, []]);
    // A coordinator read, cited by the packet's excerpt, its ledger and its fragment: one citation of lines 11-12.
    expect(figures('World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md')).toEqual([1, 0, 2, 3, [[11, 12]]]);
    // Followed, never read: the fragment's followed_ref is its own lookup.
    expect(figures('World/Pre-Elysium/Timeline/Events/Kestrel Route Accord.md')).toEqual([1, 1, 0, 1, []]);
  });

  it('is a usage error (exit 2) without --out or without artifacts', async () => {
    const noOut = await run(['coverage', '--lore', 'lore-fixtures/FixtureLore', 'lore-fixtures/artifacts']);
    expect(noOut.code).toBe(2);
    expect(noOut.err).toContain("required option '--out <dir>' not specified");
    const noArtifacts = await run(['coverage', '--lore', 'lore-fixtures/FixtureLore', '--out', join(out, 'd')]);
    expect(noArtifacts.code).toBe(2);
    expect(noArtifacts.err).toContain("missing required argument 'artifacts'");
  });

  it('runs as the installed bin', () => {
    const bin = join(REPO, 'bin', 'loretrace.js');
    const stdout = execFileSync(process.execPath, [bin, 'coverage', '--lore', 'lore-fixtures/FixtureLore', 'lore-fixtures/artifacts/digest.harbor.json', '--out', join(out, 'e'), '--json', '--index-dir', join(out, 'idx')], { cwd: REPO, encoding: 'utf8' });
    expect(JSON.parse(stdout).files).toEqual({ json: expect.stringMatching(/e\/coverage\.json$/), md: expect.stringMatching(/e\/coverage\.md$/), html: expect.stringMatching(/e\/coverage\.html$/) });
  });
});

if (!hasShared) console.warn(`[coverage] ${sharedNotice}`);
describe.skipIf(!hasShared)('coverageReport on the real AetheriaLore vault with the Ghostlight artifacts', () => {
  let report: CoverageReport;
  beforeAll(async () => {
    const index = await indexVault(AETHERIA, { persist: false });
    const { artifacts, skipped } = await readArtifacts([GL], { cwd: REPO });
    report = coverageReport(index, artifacts, { noteLines: await loadNoteLines(index), skipped });
  });

  it('finds 5 cited notes of 148, all from the Sella research packet, and no stale citation', () => {
    const t = report.totals;
    // 9 packets and captures plus the corpus coverage ledger.
    expect([t.notes, t.artifacts, t.skipped_inputs, t.lore_citations, t.cited_notes, t.stale_citations, t.non_lore_refs, t.other_namespace_refs, t.rejected_refs]).toEqual([148, 10, 9, 5, 5, 0, 24, 0, 0]);
    // The Sella excerpts are written by the coordinator, not quoted: each cites a whole note or section, so no line
    // counts as covered (a note cited once is never "35/35 lines").
    expect(report.notes.filter((n) => n.citations > 0).map((n) => [n.path, n.whole_citations, n.covered_lines, n.body_lines])).toEqual([
      ['Aetheria/Worldbuilding/Pre-Elysium/Factions/Powers/Major/Aya Collective.md', 1, 0, 35],
      ['Aetheria/Worldbuilding/Pre-Elysium/Factions/Powers/Major/Cetacean Navigators.md', 1, 0, 36],
      ['Aetheria/Worldbuilding/Pre-Elysium/Factions/Powers/Minor/Lightsail Express.md', 1, 0, 3],
      ['Aetheria/Worldbuilding/Pre-Elysium/Timeline/Events/Cold Wake Panic.md', 1, 0, 6],
      ['Aetheria/Worldbuilding/Pre-Elysium/Timeline/Events/Ganymede Route Compact.md', 1, 0, 7],
    ]);
    expect([t.covered_lines, t.body_lines, t.line_coverage, t.whole_citations]).toEqual([0, 2263, 0, 5]);
    expect(new Set(report.citations.map((c) => c.artifact))).toEqual(new Set([`${GL}packets/scene-02-sanctuary-intake.sella_ren.packet.research.v0.json`]));
    // The heading ref covers only its section.
    expect(report.citations.find((c) => c.ref.endsWith('#Rescue Ledgers'))).toMatchObject({ line_start: 38, line_end: 42, cites: 'section', status: 'ok', checked: 'resolved_only' });
  });

  it('joins the fixture corpus ledger: which subjects have lore citations and which have none', () => {
    const c = report.corpus!;
    expect(c.files).toEqual([`${GL}corpus-coverage.json`]);
    expect(c.totals).toEqual({ fixtures: 5, subjects: 21, matched_subjects: 14, cited_subjects: 0 });
    expect(c.subjects.find((x) => x.subject === 'Lucent Media')).toEqual({
      subject: 'Lucent Media', roles: ['primary'], fixtures: ['lucent-hostage-feed-negotiator-branch-v1', 'lucent-hostage-feed-v0'],
      path: 'Aetheria/Worldbuilding/Pre-Elysium/Factions/Powers/Major/Lucent Media.md', other_candidates: [], citations: 0,
    });
    expect(c.subjects.find((x) => x.subject === 'Uplifted ravens')).toMatchObject({ path: null, citations: 0 });
    expect(c.fixtures.find((f) => f.fixture_id === 'pallas-training-loop-v0')).toEqual({
      fixture_id: 'pallas-training-loop-v0', status: expect.any(String), subjects: 6, cited_subjects: 0,
      uncited: ['Aeronautics Unlimited', 'Awakened Labor Front', 'Baseline League', 'Cephalopod Syndicate', 'Pallas Species Strikes', 'VitaForge BioDrone Standard'],
    });
  });

  it('names the 10 untouched classes', () => {
    expect(report.untouched_classes).toEqual(['brainstorming', 'concepts', 'defunct', 'index', 'movements', 'politics', 'post-elysium', 'reference', 'species', 'technology']);
    expect(report.totals.classes).toBe(19);
  });

  it('counts the non-lore refs of every packet and capture apart', () => {
    expect(report.non_lore_refs.map((r) => r.ref)).toContain('agents.sella_ren.memories.memory-care-is-capacity');
    expect(report.non_lore_refs.map((r) => r.ref)).toContain('examples/projected-contexts/scene-02-sanctuary-intake.sella_ren.projected-context.json#context.current_stakes');
    expect(report.non_lore_refs.map((r) => r.ref)).toContain('packet_prompt_text');
  });

  it('skips the schemas, projected contexts, corpus ledger and Markdown files with reasons', () => {
    expect(report.skipped.map((s) => [s.file.replace(GL, ''), s.reason])).toEqual([
      ['corpus-coverage-ledger.md', 'unsupported_extension'],
      ['projected-contexts/lucent-hostage-feed-v0.turn-06.sol-vant.projected-context.json', 'no_lore_refs'],
      ['projected-contexts/lucent-hostage-feed-v0.turn-14.sol-vant.projected-context.json', 'no_lore_refs'],
      ['projected-contexts/pallas-training-loop-v0.turn-01.nara-7.projected-context.json', 'no_lore_refs'],
      ['projected-contexts/pallas-training-loop-v0.turn-02.ilya-marne.projected-context.json', 'no_lore_refs'],
      ['projected-local-context.md', 'unsupported_extension'],
      ['schemas/projected-local-context.schema.json', 'no_lore_refs'],
      ['schemas/responder-output.schema.json', 'no_lore_refs'],
      ['schemas/responder-packet.schema.json', 'no_lore_refs'],
    ]);
  });

  it('lists the vault\'s 6 unresolved links and 3 orphan notes', () => {
    expect(report.gaps.unresolved_links.map((g) => `${g.source_path}:${g.line}:${g.column} ${g.raw}`)).toEqual([
      'Aetheria/Worldbuilding/Politics/PSCC.md:1:523 [[Enforcement]]',
      'Aetheria/Worldbuilding/Pre-Elysium/Factions/Powers/Major/Zhestokost.md:70:1 [[Vasily Dragunov]]',
      'Aetheria/Worldbuilding/Pre-Elysium/Factions/Powers/Major/Zhestokost.md:72:1 [[Anya Velikova]]',
      'Aetheria/Worldbuilding/Pre-Elysium/Factions/Powers/Major/Zhestokost.md:74:1 [[Dimitri Volkov]]',
      'Aetheria/Worldbuilding/Pre-Elysium/Megas.md:55:56 [[Bio-Purist]]',
      'Aetheria/Worldbuilding/Pre-Elysium/Technology/Bloom.md:48:351 [[Conflict Permit]]',
    ]);
    expect(report.gaps.orphan_notes).toEqual(['Aetheria/Brainstorming/Technology/index.md', 'Aetheria/Brainstorming/index.md', 'Aetheria/index.md']);
    expect([report.gaps.ambiguous_links.length, report.gaps.broken_fragments.length]).toEqual([0, 0]);
  });

  it('validates against the schema', () => {
    expect(validateReport(report), JSON.stringify(validateReport.errors)).toBe(true);
  });
});

describe('coverage inputs that are not lore artifacts', () => {
  it('joins a corpus coverage ledger: subjects matched to notes by folded name, cited or not', async () => {
    const index = await indexVault(FIXTURE_VAULT, { persist: false });
    const { artifacts, skipped } = await readArtifacts(['lore-fixtures/artifacts', 'lore-fixtures/corpus'], { cwd: REPO });
    const r = coverageReport(index, artifacts, { noteLines: await loadNoteLines(index), skipped });
    expect(r.corpus).toEqual({
      files: ['lore-fixtures/corpus/corpus-coverage.json'],
      subjects: [
        // Most cited first; "Harbor  Ledger" and "tide court" fold to the notes' titles.
        { subject: 'Harbor Ledger', roles: ['primary'], fixtures: ['saltmere-berth-dispute-v0', 'saltmere-rescue-dues-v0'], path: 'Coverage/Harbor Ledger.md', other_candidates: [], citations: 8 },
        { subject: 'tide court', roles: ['primary'], fixtures: ['saltmere-berth-dispute-v0'], path: 'Coverage/Tide Court.md', other_candidates: [], citations: 6 },
        { subject: 'Drowned Archive', roles: ['secondary'], fixtures: ['saltmere-berth-dispute-v0'], path: null, other_candidates: [], citations: 0 },
        { subject: 'Lonely Reef', roles: ['secondary'], fixtures: ['saltmere-berth-dispute-v0'], path: 'Coverage/Lonely Reef.md', other_candidates: [], citations: 0 },
        { subject: 'Rescue dues', roles: ['flashpoint'], fixtures: ['saltmere-rescue-dues-v0'], path: null, other_candidates: [], citations: 0 },
        { subject: 'Saltmere berth dispute', roles: ['flashpoint'], fixtures: ['saltmere-berth-dispute-v0'], path: null, other_candidates: [], citations: 0 },
      ],
      fixtures: [
        { fixture_id: 'saltmere-berth-dispute-v0', status: 'draft', subjects: 5, cited_subjects: 2, uncited: ['Drowned Archive', 'Lonely Reef', 'Saltmere berth dispute'] },
        { fixture_id: 'saltmere-rescue-dues-v0', status: 'planned', subjects: 2, cited_subjects: 1, uncited: ['Rescue dues'] },
      ],
      totals: { fixtures: 2, subjects: 6, matched_subjects: 3, cited_subjects: 2 },
    });
    expect(r.artifacts.find((a) => a.kind === 'corpus_coverage_ledger')).toMatchObject({ file: 'lore-fixtures/corpus/corpus-coverage.json', lore_citations: 0 });
    expect(validateReport(r), JSON.stringify(validateReport.errors)).toBe(true);
    expect(renderCoverageMarkdown(r)).toContain('| Harbor Ledger | primary | Coverage/Harbor Ledger.md | 8 | saltmere-berth-dispute-v0, saltmere-rescue-dues-v0 |');
    expect(renderCoverageHtml(r)).toContain('<section id="corpus">');
  });

  it("skips loretrace's own --json summaries instead of counting their source_refs as a digest", () => {
    const summary = { ok: true, lane: 'coordinator_scoped_retrieval', stats: { excerpts_added: 1 }, source_refs: ['Hand:Lore/A.md#chunk0'], written: ['p.json'] };
    expect(skipped('retrieve.json', JSON.stringify(summary))).toEqual({
      file: 'retrieve.json', reason: 'no_lore_refs',
      message: "retrieve.json: loretrace's own command output (a --json summary or report), not a lore artifact: its citations are in the files it wrote; pass those",
    });
    expect(skipped('lock.json', JSON.stringify({ schema_version: 'loretrace.lock.v1', files: [] })).reason).toBe('no_lore_refs');
  });

  it('keeps a not-JSON message on one line even when the text holds line breaks', () => {
    const m = skipped('two-lines.json', 'nope\nstill nope').message;
    expect(m.includes('\n')).toBe(false);
    expect(m).toMatch(/^two-lines\.json: not JSON/);
  });
});

describe('coverage.md table cells', () => {
  it('escapes vault text so no inline HTML, code span or extra column survives', () => {
    expect(cell('W/<svg onload=alert(4)>.md:2:7')).toBe('W/&lt;svg onload=alert(4)&gt;.md:2:7');
    expect(cell('[[<script>alert(2)</script>]]')).toBe('[[&lt;script&gt;alert(2)&lt;/script&gt;]]');
    expect(cell('a | b `c` &amp; d\\e\nf')).toBe('a \\| b &#96;c&#96; &amp;amp; d\\\\e f');
    expect([cell(null), cell(3)]).toEqual(['–', '3']);
  });
});
