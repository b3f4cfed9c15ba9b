/**
 * Validators and `loretrace validate`: exact verdicts on every real Ghostlight file (parity), lenient mode,
 * --root ref checks, pointers, JSON parse errors, and the CLI's human and --json output.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { isLoretraceError } from '../src/errors.js';
import { parseJsonDocument, validateCapture, validateCaptureFragment, validateDocument, validatePacket, validateProjectedContext } from '../src/contracts/validate.js';
import { firstDifference, pointerOf, VALIDATION_RULES } from '../src/contracts/rules.js';
import type { ValidationReport } from '../src/contracts/types.js';
import { GHOSTLIGHT, hasShared, REPO, sharedNotice } from './helpers/shared.js';

const FIXTURES = join(REPO, 'tests', 'fixtures', 'validate');
const readJson = (p: string): Record<string, any> => JSON.parse(readFileSync(p, 'utf8')); // eslint-disable-line @typescript-eslint/no-explicit-any
const real = (dir: string) => (hasShared ? readdirSync(join(GHOSTLIGHT, dir)).sort() : []);

const CAPTURE_TOP_LEVEL =
  'only the properties schema_version, capture_id, review_status, fixture_lane, canon_status, packet_ref, coordinator_artifact_ref, responder_agent_id, generation_lane, lore_access, isolation, raw_output, parsed_output, leakage_audit, coordinator_review';

async function cli(argv: string[], cwd: string) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), cwd, env: {} });
  return { code, stdout, stderr };
}

const temps: string[] = [];
afterAll(() => temps.forEach((t) => rmSync(t, { recursive: true, force: true })));
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'loretrace-validate-'));
  temps.push(d);
  return d;
}

describe.skipIf(!hasShared)(`parity on real Ghostlight files (${hasShared ? 'shared data present' : sharedNotice})`, () => {
  it('accepts all five real packets (all accepted_as_draft), strict and lenient, with no error at all', () => {
    expect(real('packets')).toHaveLength(5);
    for (const f of real('packets')) {
      const doc = readJson(join(GHOSTLIGHT, 'packets', f));
      expect(doc.review_status).toBe('accepted_as_draft');
      expect(validatePacket(doc, { file: f })).toEqual({ file: f, kind: 'packet', valid: true, errors: [], warnings: [] });
      expect(validatePacket(doc, { file: f, lenient: true })).toEqual({ file: f, kind: 'packet', valid: true, errors: [], warnings: [] });
    }
  });

  it('finds every allowed_scope entry and allowed prefix of the sella research packet in its prompt', () => {
    const doc = readJson(join(GHOSTLIGHT, 'packets', 'scene-02-sanctuary-intake.sella_ren.packet.research.v0.json'));
    expect(doc.lore_access.mode).toBe('responder_scoped_repository_search');
    expect(doc.lore_access.allowed_scope).toHaveLength(15);
    expect(doc.lore_access.traversal_policy.allowed_prefixes).toHaveLength(3);
    const missing = [...doc.lore_access.allowed_scope, ...doc.lore_access.traversal_policy.allowed_prefixes].filter((s: string) => !doc.packet_prompt_text.includes(s));
    expect(missing).toEqual([]);
    expect(doc.isolation_requirements.no_repo_access).toBe(false);
    expect(validatePacket(doc).valid).toBe(true);
  });

  it('rejects exactly the two captures with raw_output_exact, with one additional-property error each', () => {
    const verdicts = Object.fromEntries(real('captures').map((f) => [f, validateCapture(readJson(join(GHOSTLIGHT, 'captures', f)), { file: f })]));
    expect(Object.fromEntries(Object.entries(verdicts).map(([f, r]) => [f, r.valid]))).toEqual({
      'lucent-hostage-feed-v0.turn-06.sol-vant.packet.capture.json': false,
      'lucent-hostage-feed-v0.turn-14.sol-vant.packet.capture.json': false,
      'pallas-training-loop-v0.turn-01.nara-7.packet.capture.json': true,
      'pallas-training-loop-v0.turn-02.ilya-marne.packet.capture.json': true,
    });
    for (const f of ['lucent-hostage-feed-v0.turn-06.sol-vant.packet.capture.json', 'lucent-hostage-feed-v0.turn-14.sol-vant.packet.capture.json']) {
      expect(verdicts[f]?.errors).toEqual([
        { rule: 'schema.additional_property', pointer: '/raw_output_exact', message: 'the document has unknown property "raw_output_exact"', expected: CAPTURE_TOP_LEVEL },
      ]);
    }
  });

  it('accepts all four real captures with --lenient, reporting raw_output_exact as an ignored property', () => {
    for (const f of real('captures')) {
      const r = validateCapture(readJson(join(GHOSTLIGHT, 'captures', f)), { file: f, lenient: true });
      expect(r.valid).toBe(true);
      expect(r.errors).toEqual([]);
      expect(r.warnings).toEqual(
        f.startsWith('lucent')
          ? [{ rule: 'lenient.ignored_property', pointer: '/raw_output_exact', message: 'the document has unknown property "raw_output_exact"; ignored (lenient)' }]
          : [],
      );
    }
  });

  it('rejects all four real projected contexts, strict and lenient: projection_controls is an array, the contract says object', () => {
    expect(real('projected-contexts')).toHaveLength(4);
    for (const f of real('projected-contexts')) {
      const doc = readJson(join(GHOSTLIGHT, 'projected-contexts', f));
      expect(Array.isArray(doc.context.projection_controls)).toBe(true);
      for (const lenient of [false, true]) {
        expect(validateProjectedContext(doc, { file: f, lenient })).toEqual({
          file: f,
          kind: 'projected-context',
          valid: false,
          errors: [{ rule: 'schema.type', pointer: '/context/projection_controls', message: 'context.projection_controls is of type array', expected: 'object' }],
          warnings: [],
        });
      }
    }
  });

  it('with --root at ../shared/ghostlight reports every repository ref as missing (the examples/ tree is not shipped)', () => {
    const rules = (r: ValidationReport) => r.errors.filter((e) => e.rule.startsWith('ref.')).map((e) => e.pointer);
    for (const f of real('packets')) expect(rules(validatePacket(readJson(join(GHOSTLIGHT, 'packets', f)), { root: GHOSTLIGHT }))).toEqual(['/coordinator_artifact_ref', '/projected_context_ref']);
    for (const f of real('captures')) expect(rules(validateCapture(readJson(join(GHOSTLIGHT, 'captures', f)), { root: GHOSTLIGHT }))).toEqual(['/coordinator_artifact_ref', '/isolation/visible_input_ref', '/packet_ref']);
    for (const f of real('projected-contexts')) expect(rules(validateProjectedContext(readJson(join(GHOSTLIGHT, 'projected-contexts', f)), { root: GHOSTLIGHT }))).toEqual(['/input/annotation_ref', '/input/fixture_ref']);
    const one = validatePacket(readJson(join(GHOSTLIGHT, 'packets', 'pallas-training-loop-v0.turn-01.nara-7.packet.json')), { root: GHOSTLIGHT }).errors[0];
    expect(one).toEqual({
      rule: 'ref.not_found',
      pointer: '/coordinator_artifact_ref',
      message: `coordinator_artifact_ref "examples/coordinator/pallas-training-loop-v0.turn-01.coordinator.json" does not exist under root ${GHOSTLIGHT}`,
      expected: `an existing file ${join(GHOSTLIGHT, 'examples/coordinator/pallas-training-loop-v0.turn-01.coordinator.json')}`,
    });
  });
});

describe('validatePacket', () => {
  it('accepts the project fixtures and names the file it was given', () => {
    const r = validatePacket(readJson(join(FIXTURES, 'research.packet.json')), { file: 'research.packet.json' });
    expect(r).toEqual({ file: 'research.packet.json', kind: 'packet', valid: true, errors: [], warnings: [] });
    expect(validatePacket(readJson(join(FIXTURES, 'packet-only.packet.json'))).file).toBe('<input>');
  });

  it('escapes ~ and / in pointers (RFC 6901)', () => {
    const doc = readJson(join(FIXTURES, 'packet-only.packet.json'));
    doc.review['a/b~c'] = 1;
    expect(validatePacket(doc).errors.map((e) => e.pointer)).toEqual(['/review/a~1b~0c']);
    expect(pointerOf('a/b', '~', 0)).toBe('/a~1b/~0/0');
  });

  it('reports a missing required property at the pointer of that property', () => {
    const doc = readJson(join(FIXTURES, 'packet-only.packet.json'));
    delete doc.visible_context.observed_event.event_id;
    expect(validatePacket(doc).errors).toEqual([
      { rule: 'schema.required', pointer: '/visible_context/observed_event/event_id', message: 'visible_context.observed_event is missing required property "event_id"', expected: 'property "event_id" present' },
    ]);
  });

  it('reports an unknown enum value once, without a lane rule on top', () => {
    const doc = readJson(join(FIXTURES, 'packet-only.packet.json'));
    doc.lore_access.mode = 'open_book';
    expect(validatePacket(doc).errors).toEqual([
      { rule: 'schema.enum', pointer: '/lore_access/mode', message: 'lore_access.mode is "open_book", not an allowed value', expected: 'one of "curated_excerpts_only", "coordinator_scoped_retrieval", "responder_scoped_repository_search"' },
    ]);
  });

  it('reports one prompt.missing_allowed_scope error per missing scope entry, naming its pointer', () => {
    const doc = readJson(join(FIXTURES, 'research.packet.json'));
    doc.lore_access.allowed_scope.push('FixtureLore:World/Technology/Lamps.md', 'FixtureLore:World/Technology/Locks.md');
    expect(validatePacket(doc).errors).toEqual([
      { rule: 'prompt.missing_allowed_scope', pointer: '/packet_prompt_text', message: 'packet_prompt_text does not contain allowed_scope entry /lore_access/allowed_scope/2 "FixtureLore:World/Technology/Lamps.md"', expected: 'every allowed_scope entry, verbatim' },
      { rule: 'prompt.missing_allowed_scope', pointer: '/packet_prompt_text', message: 'packet_prompt_text does not contain allowed_scope entry /lore_access/allowed_scope/3 "FixtureLore:World/Technology/Locks.md"', expected: 'every allowed_scope entry, verbatim' },
    ]);
  });

  it('reports a non-object document as a schema.type error at the root pointer', () => {
    expect(validatePacket([1, 2]).errors).toEqual([{ rule: 'schema.type', pointer: '', message: 'the document is of type array', expected: 'object' }]);
  });
});

describe('validateCapture', () => {
  it('accepts both capture fixtures (coordinator_scoped_retrieval and responder_scoped_repository_search, runner_captured)', () => {
    expect(validateCapture(readJson(join(FIXTURES, 'coordinator.capture.json'))).errors).toEqual([]);
    expect(validateCapture(readJson(join(FIXTURES, 'research.capture.json'))).errors).toEqual([]);
  });

  it('ignores key order when comparing raw_output with parsed_output', () => {
    const doc = readJson(join(FIXTURES, 'coordinator.capture.json'));
    const parsed = doc.parsed_output as Record<string, unknown>;
    doc.raw_output = JSON.stringify(Object.fromEntries(Object.entries(parsed).reverse()));
    expect(validateCapture(doc).errors).toEqual([]);
  });

  it('checks duplicate trace ids inside parsed_output.research_trace too', () => {
    const doc = readJson(join(FIXTURES, 'research.capture.json'));
    doc.parsed_output.research_trace[1].trace_id = 'trace-1';
    doc.raw_output = JSON.stringify(doc.parsed_output);
    expect(validateCapture(doc).errors).toEqual([
      { rule: 'trace.duplicate_id', pointer: '/parsed_output/research_trace/1/trace_id', message: 'trace_id "trace-1" repeats /parsed_output/research_trace/0/trace_id', expected: 'trace_id values unique within the research_trace array' },
    ]);
  });

  it('reports a single oneOf error for a bad update candidate, not its per-branch errors', () => {
    const doc = readJson(join(FIXTURES, 'coordinator.capture.json'));
    doc.parsed_output.relationship_update_candidates = [{ value: '' }];
    doc.raw_output = JSON.stringify(doc.parsed_output);
    expect(validateCapture(doc).errors).toEqual([
      {
        rule: 'schema.one_of',
        pointer: '/parsed_output/relationship_update_candidates/0',
        message: 'parsed_output.relationship_update_candidates.0 ({"value":""}) matches none of the allowed shapes',
        expected: 'A candidate state or relationship update: a non-empty string, or an object with a non-empty string value (other keys allowed).',
      },
    ]);
  });
});

describe('validateProjectedContext', () => {
  it('accepts the project fixture, whose projection_controls is an object', () => {
    expect(validateProjectedContext(readJson(join(FIXTURES, 'projected-context.json'))).errors).toEqual([]);
  });

  it('checks input.fixture_ref and input.annotation_ref only when a root is given', () => {
    const doc = readJson(join(FIXTURES, 'projected-context.json'));
    const root = tempDir();
    writeFileSync(join(root, 'fixture.initial-state.json'), '{}');
    expect(validateProjectedContext(doc).errors).toEqual([]);
    expect(validateProjectedContext(doc, { root }).errors.map((e) => [e.rule, e.pointer])).toEqual([['ref.not_found', '/input/annotation_ref']]);
  });
});

describe('validateCaptureFragment', () => {
  const frag = () => readJson(join(FIXTURES, 'coordinator.fragment.json'));

  it('accepts the fixture fragment, whose first five fields copy into a capture\'s lore_access', () => {
    expect(validateCaptureFragment(frag(), { file: 'f.json' })).toEqual({ file: 'f.json', kind: 'capture-fragment', valid: true, errors: [], warnings: [] });
    const capture = readJson(join(FIXTURES, 'coordinator.capture.json'));
    const { mode, consulted_refs, followed_refs, research_trace, research_trace_status } = frag();
    capture.lore_access = { mode, consulted_refs, followed_refs, research_trace, research_trace_status };
    expect(validateCapture(capture).errors).toEqual([]);
  });

  it('refuses the capture-only research_summary strictly and ignores it with a warning when lenient', () => {
    const d = frag();
    d.research_summary = 'x';
    expect(validateCaptureFragment(d).errors).toEqual([{
      rule: 'schema.additional_property', pointer: '/research_summary', message: 'the document has unknown property "research_summary"',
      expected: 'only the properties mode, consulted_refs, followed_refs, research_trace, research_trace_status, snapshot_id, policy_receipt, packet_id, ledger_head',
    }]);
    const lenient = validateCaptureFragment(d, { lenient: true });
    expect(lenient.valid).toBe(true);
    expect(lenient.warnings.map((w) => [w.rule, w.pointer])).toEqual([['lenient.ignored_property', '/research_summary']]);
  });

  it('checks trace entries and receipt rows through the shared definitions, leniently too', () => {
    const d = frag();
    d.research_trace[0].line_start = 0;
    d.policy_receipt[0].disposition = 'maybe';
    for (const lenient of [false, true]) {
      expect(validateCaptureFragment(d, { lenient }).errors.map((e) => [e.rule, e.pointer])).toEqual([
        ['schema.enum', '/policy_receipt/0/disposition'],
        ['schema.minimum', '/research_trace/0/line_start'],
      ]);
    }
  });

  it('names the entry whose origin contradicts runner_captured', () => {
    const d = frag();
    d.research_trace[0].origin = 'responder_reported';
    expect(validateCaptureFragment(d).errors).toEqual([{
      rule: 'fragment.origin_mismatch', pointer: '/research_trace/0/origin',
      message: 'research_trace_status is runner_captured but entry 0 has origin responder_reported', expected: 'origin runner_captured on every entry',
    }]);
  });
});

describe('validateDocument', () => {
  it('sorts errors by pointer, then rule', () => {
    const doc = readJson(join(FIXTURES, 'packet-only.packet.json'));
    doc.review.reviewer = '';
    doc.canon_status = 'fanon';
    doc.isolation_requirements.no_repo_access = false;
    expect(validateDocument('packet', doc).errors.map((e) => [e.pointer, e.rule])).toEqual([
      ['/canon_status', 'schema.enum'],
      ['/isolation_requirements/no_repo_access', 'isolation.requires_no_repo_access'],
      ['/review/reviewer', 'schema.min_length'],
    ]);
  });

  it('gives byte-identical reports for the same input', () => {
    const doc = readJson(join(FIXTURES, 'research.capture.json'));
    doc.raw_output = '{';
    expect(JSON.stringify(validateDocument('capture', doc))).toBe(JSON.stringify(validateDocument('capture', structuredClone(doc))));
  });
});

describe('VALIDATION_RULES', () => {
  it('are all documented in docs/VALIDATE.md with their id', () => {
    const doc = readFileSync(join(REPO, 'docs', 'VALIDATE.md'), 'utf8');
    expect(VALIDATION_RULES.map((r) => r.id).filter((id) => !doc.includes(`| \`${id}\` |`))).toEqual([]);
    expect(VALIDATION_RULES).toHaveLength(45);
  });

  it('are documented row for row as the data says (id, kinds, meaning, source)', () => {
    const doc = readFileSync(join(REPO, 'docs', 'VALIDATE.md'), 'utf8');
    const rows = VALIDATION_RULES.map((r) => `| \`${r.id}\` | ${r.kinds.join(', ')} | ${r.meaning} | ${r.source} |`);
    expect(rows.filter((row) => !doc.split('\n').includes(row))).toEqual([]);
  });
});

describe('firstDifference', () => {
  it('returns the first differing pointer, or null for deep-equal values', () => {
    expect(firstDifference({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 })).toBeNull();
    expect(firstDifference({ a: 1, b: [1, 2] }, { a: 1, b: [1, 3] })).toBe('/b/1');
    expect(firstDifference({ a: 1 }, { a: 1, 'x/y': 2 })).toBe('/x~1y');
    expect(firstDifference([1], [1, 2])).toBe('/1');
  });
});

describe('parseJsonDocument', () => {
  it('parses JSON and ignores a leading BOM', () => {
    expect(parseJsonDocument('\uFEFF{"a":1}', 'x.json')).toEqual({ a: 1 });
  });

  it('throws bad_json (exit 2) naming the file, line, column and reason', () => {
    let caught: unknown;
    try {
      parseJsonDocument('{\n  "a": 1,\n  "b": ]\n}', 'packets/bad.json');
    } catch (e) {
      caught = e;
    }
    expect(isLoretraceError(caught)).toBe(true);
    const e = caught as { code: string; message: string; exitCode: number; details: unknown };
    expect([e.code, e.message, e.exitCode]).toEqual(['bad_json', 'packets/bad.json is not JSON: expected a JSON value, found "]" at line 3, column 8', 2]);
    expect(e.details).toEqual({ file: 'packets/bad.json', line: 3, expected: 'a JSON document' });
  });

  it('reports truncated input as unexpected end of input', () => {
    expect(() => parseJsonDocument('{"a": [1, 2', 'cut.json')).toThrow('cut.json is not JSON: unexpected end of input at line 1, column 12');
  });
});

describe('loretrace validate (CLI)', () => {
  it('prints ok lines and a zero-error summary for valid fixtures, exit 0', async () => {
    const r = await cli(['validate', 'capture', 'coordinator.capture.json', 'research.capture.json'], FIXTURES);
    expect(r).toEqual({
      code: 0,
      stdout: 'coordinator.capture.json: ok\nresearch.capture.json: ok\n2 captures: 2 valid, 0 invalid; 0 errors; 0 warnings\n',
      stderr: '',
    });
  });

  it('validates capture fragments with the capture-fragment kind and lists its rules in the totals', async () => {
    const r = await cli(['validate', 'capture-fragment', 'coordinator.fragment.json'], FIXTURES);
    expect(r).toEqual({ code: 0, stdout: 'coordinator.fragment.json: ok\n1 capture-fragment: 1 valid, 0 invalid; 0 errors; 0 warnings\n', stderr: '' });
    const j = await cli(['validate', 'capture-fragment', 'coordinator.fragment.json', '--json'], FIXTURES);
    const totals = (JSON.parse(j.stdout) as { totals: { errors_by_rule: Record<string, number> } }).totals;
    expect(Object.keys(totals.errors_by_rule).filter((k) => !k.startsWith('schema.'))).toEqual([
      'fragment.origin_mismatch', 'research.missing_consulted_refs', 'trace.duplicate_id', 'trace.line_range',
    ]);
  });

  it('prints one line per error with pointer, rule and expectation, exit 1', async () => {
    const dir = tempDir();
    const doc = readJson(join(FIXTURES, 'packet-only.packet.json'));
    doc.lore_access.mode = 'coordinator_scoped_retrieval';
    doc.packet_prompt_text += '\nplasticity: high';
    writeFileSync(join(dir, 'bad.packet.json'), JSON.stringify(doc));
    const r = await cli(['validate', 'packet', 'bad.packet.json', join(FIXTURES, 'packet-only.packet.json')], dir);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(
      'bad.packet.json: /lore_access/mode: [lane.packet_only_requires_curated_excerpts] generation_lane is packet_only but lore_access.mode is coordinator_scoped_retrieval (expected curated_excerpts_only)\n' +
        `bad.packet.json: /packet_prompt_text: [prompt.raw_state_marker] packet_prompt_text exposes raw-state marker "plasticity" at character ${doc.packet_prompt_text.length - 16} (expected no raw-state markers (current_activation, plasticity, canonical_state, raw state variable, raw numeric state, dimension score))\n` +
        `${join(FIXTURES, 'packet-only.packet.json')}: ok\n` +
        '2 packets: 1 valid, 1 invalid; 2 errors (lane.packet_only_requires_curated_excerpts: 1, prompt.raw_state_marker: 1); 0 warnings\n',
    );
  });

  it('exits 2 with a clear message for an unknown kind, a missing file, a non-JSON file and a bad --root (README "Exit codes")', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'broken.json'), '{"a": 1,}');
    expect(await cli(['validate', 'pakket', 'x.json'], dir)).toEqual({ code: 2, stdout: '', stderr: 'loretrace: unknown document kind "pakket" (expected packet, capture, projected-context or capture-fragment); see \'loretrace validate --help\' [usage]\n' });
    expect(await cli(['validate', 'packet', 'nope.json'], dir)).toEqual({ code: 2, stdout: '', stderr: 'loretrace: cannot read nope.json: no such file [file_not_found]\n' });
    expect(await cli(['validate', 'packet', 'broken.json'], dir)).toEqual({ code: 2, stdout: '', stderr: 'loretrace: broken.json is not JSON: expected a property name in double quotes, found "}" at line 1, column 9 [bad_json]\n' });
    expect(await cli(['validate', 'packet', 'broken.json', '--root', 'missing-dir'], dir)).toEqual({ code: 2, stdout: '', stderr: 'loretrace: --root missing-dir is not a directory; see \'loretrace validate --help\' [usage]\n' });
  });

  it.skipIf(!hasShared)('--json on the real captures gives the reports and totals for every rule, zeros included', async () => {
    const files = real('captures').map((f) => `captures/${f}`);
    const r = await cli(['validate', 'capture', ...files, '--json'], GHOSTLIGHT);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out.kind).toBe('capture');
    expect(out.reports.map((x: ValidationReport) => [x.file, x.valid, x.errors.length])).toEqual([
      ['captures/lucent-hostage-feed-v0.turn-06.sol-vant.packet.capture.json', false, 1],
      ['captures/lucent-hostage-feed-v0.turn-14.sol-vant.packet.capture.json', false, 1],
      ['captures/pallas-training-loop-v0.turn-01.nara-7.packet.capture.json', true, 0],
      ['captures/pallas-training-loop-v0.turn-02.ilya-marne.packet.capture.json', true, 0],
    ]);
    expect(out.totals).toEqual({
      files: 4,
      valid: 2,
      invalid: 2,
      errors: 2,
      warnings: 0,
      errors_by_rule: {
        'capture.agent_mismatch': 0,
        'capture.hidden_ref_consulted': 0,
        'capture.leakage_accepted': 0,
        'capture.leakage_unlabelled': 0,
        'capture.origin_mismatch': 0,
        'capture.raw_output_mismatch': 0,
        'capture.raw_output_not_json': 0,
        'capture.training_unaccepted': 0,
        'lane.packet_only_requires_curated_excerpts': 0,
        'lane.retrieval_augmented_requires_scoped_mode': 0,
        'ref.not_found': 0,
        'ref.outside_root': 0,
        'research.missing_consulted_refs': 0,
        'research.missing_summary': 0,
        'schema.additional_property': 2,
        'schema.const': 0,
        'schema.enum': 0,
        'schema.min_items': 0,
        'schema.min_length': 0,
        'schema.minimum': 0,
        'schema.one_of': 0,
        'schema.required': 0,
        'schema.type': 0,
        'trace.accepted_requires_runner_captured': 0,
        'trace.accepted_requires_trace': 0,
        'trace.duplicate_id': 0,
        'trace.line_range': 0,
      },
    });
    const lenient = await cli(['validate', 'capture', ...files, '--lenient'], GHOSTLIGHT);
    expect(lenient.code).toBe(0);
    expect(lenient.stdout.split('\n').at(-2)).toBe('4 captures: 4 valid, 0 invalid; 0 errors; 2 warnings');
  });

  const bin = join(REPO, 'bin', 'loretrace.js');
  const built = existsSync(join(REPO, 'dist', 'cli', 'main.js'));
  it.skipIf(!built)('runs as a process from bin/loretrace.js (needs `npm run build`)', () => {
    const r = spawnSync(process.execPath, [bin, 'validate', 'projected-context', 'projected-context.json'], { cwd: FIXTURES, encoding: 'utf8' });
    expect([r.status, r.stdout, r.stderr]).toEqual([0, 'projected-context.json: ok\n1 projected-context: 1 valid, 0 invalid; 0 errors; 0 warnings\n', '']);
  });
});
