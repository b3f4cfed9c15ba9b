/**
 * README "Exit codes": the same input problem gets the same exit code and error code from every command
 * that reads a file — `2` with the strict reader's code for a file that cannot be read as a document
 * (missing, a directory, not UTF-8, not JSON, a key twice), `1` for JSON of the wrong shape, a failed check
 * or a report that lists an unusable input, `2` for a folder holding nothing to check and for an output
 * that would be overwritten. Exact exit codes, error codes and messages; in-process runs of the CLI.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { FIXTURE_VAULT, REPO } from './helpers/shared.js';
import { writeTestKey } from './helpers/keys.js';

const T = mkdtempSync(join(tmpdir(), 'lt-exit-'));
const IDX = join(T, 'index');
const L = ['--lore', FIXTURE_VAULT, '--index-dir', IDX];
const DRAFT = 'lore-fixtures/packets/brinefall-intake.turn-01.mara-voss.draft.packet.json';
const RESEARCH = 'lore-fixtures/packets/proxy-fixture-research.packet.json';
const POLICY = 'lore-fixtures/packets/brinefall-intake.policy.json';
const RAW = 'lore-fixtures/captures/mara-voss.turn-01.raw.json';
const RESEARCH_RAW = 'lore-fixtures/captures/dock-warden-ilse.research.raw.json';

/** One bad input of each kind, by name: its path and its bytes (a directory for `dir`, nothing for `missing`). */
const BAD: Record<string, { file: string; bytes?: Buffer | string; dir?: true }> = {
  missing: { file: join(T, 'missing.json') },
  dir: { file: join(T, 'a-folder'), dir: true },
  not_utf8: { file: join(T, 'latin1.json'), bytes: Buffer.from('{"a": "caf\xe9"}', 'latin1') },
  empty: { file: join(T, 'empty.json'), bytes: '' },
  not_json: { file: join(T, 'torn.json'), bytes: '{"a": 1' },
  key_twice: { file: join(T, 'twice.json'), bytes: '{"a": 1,\n"a": 2}' },
  wrong_shape: { file: join(T, 'array.json'), bytes: '[1]' },
};
for (const b of Object.values(BAD)) {
  if (b.dir) mkdirSync(b.file, { recursive: true });
  else if (b.bytes !== undefined) writeFileSync(b.file, b.bytes);
}

/** What the strict reader answers for each unreadable kind: the message after `loretrace: `. */
const READER: Record<string, (f: string) => string> = {
  missing: (f) => `cannot read ${f}: no such file [file_not_found]`,
  dir: (f) => `cannot read ${f}: is a directory [file_not_found]`,
  not_utf8: (f) => `${f} is not UTF-8: invalid byte 0xe9 at byte offset 10 [not_utf8]`,
  empty: (f) => `${f} is not JSON: unexpected end of input at line 1, column 1 [bad_json]`,
  not_json: (f) => `${f} is not JSON: unexpected end of input at line 1, column 8 [bad_json]`,
  key_twice: (f) => `${f} has the key /a twice (line 1 and line 2); JSON readers keep only the last value, so the document would not be applied as a reviewer reads it; expected each key once per object [duplicate_key]`,
};

let outN = 0;
/** A fresh output path under the temp folder. */
const out = (ext = '.json') => join(T, `out-${outN++}${ext}`);

async function run(argv: string[], stdin: Buffer = Buffer.alloc(0)) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: {}, cwd: REPO, isTTY: false, readStdin: async () => stdin,
  });
  return { code, stdout, stderr };
}

/** Every command's JSON input, as a function of the file to put there. */
const JSON_INPUTS: [string, (f: string) => string[]][] = [
  ['validate packet <file>', (f) => ['validate', 'packet', f]],
  ['traverse --policy', (f) => ['traverse', ...L, '--policy', f]],
  ['traverse --packet', (f) => ['traverse', ...L, '--packet', f]],
  ['traverse --projected-context', (f) => ['traverse', ...L, '--policy', POLICY, '--projected-context', f]],
  ['retrieve --packet', (f) => ['retrieve', ...L, '--packet', f, '--policy', POLICY, '--out', out()]],
  ['retrieve --policy', (f) => ['retrieve', ...L, '--packet', DRAFT, '--policy', f, '--out', out()]],
  ['retrieve --projected-context', (f) => ['retrieve', ...L, '--packet', DRAFT, '--policy', POLICY, '--projected-context', f, '--out', out()]],
  ['verify-trace <file>', (f) => ['verify-trace', ...L, f]],
  ['serve --packet', (f) => ['serve', ...L, '--packet', f, '--ledger', out('.jsonl'), '--http', '127.0.0.1:0']],
  ['capture --packet', (f) => ['capture', ...L, '--packet', f, '--raw-output', RAW, '--out', out(), '--model-family', 'm', '--reviewer', 'r']],
  ['capture --fragment', (f) => ['capture', ...L, '--packet', RESEARCH, '--raw-output', RESEARCH_RAW, '--fragment', f, '--out', out(), '--model-family', 'm', '--reviewer', 'r']],
];

/** Inputs that are text but not JSON documents (ledgers, keys): only the file-level problems apply. */
const TEXT_INPUTS: [string, (f: string) => string[]][] = [
  ['ledger verify <file>', (f) => ['ledger', 'verify', f]],
  ['ledger export <file>', (f) => ['ledger', 'export', f, ...L, '--out', out()]],
  ['capture --ledger', (f) => ['capture', ...L, '--packet', RESEARCH, '--raw-output', RESEARCH_RAW, '--ledger', f, '--out', out(), '--model-family', 'm', '--reviewer', 'r']],
  ['verify-trace --ledger', (f) => ['verify-trace', ...L, 'lore-fixtures/artifacts', '--ledger', f]],
  ['retrieve --signing-key', (f) => ['retrieve', ...L, '--packet', DRAFT, '--policy', POLICY, '--signing-key', f, '--out', out()]],
  ['verify-trace --trust-key', (f) => ['verify-trace', ...L, DRAFT, '--trust-key', f]],
];

describe('a JSON input that cannot be read as a document: exit 2 and the strict reader\'s code, in every command', () => {
  for (const [name, argv] of JSON_INPUTS) {
    it(name, async () => {
      const got: Record<string, unknown> = {};
      const want: Record<string, unknown> = {};
      for (const [kind, message] of Object.entries(READER)) {
        // verify-trace walks a folder it is given (a folder with nothing to check: below).
        if (kind === 'dir' && name.startsWith('verify-trace')) continue;
        const f = BAD[kind]!.file;
        got[kind] = await run(argv(f));
        want[kind] = { code: 2, stdout: '', stderr: `loretrace: ${message(f)}\n` };
      }
      expect(got).toEqual(want);
    });
  }
});

describe('a text input (ledger, key) that cannot be read: exit 2, the same codes', () => {
  for (const [name, argv] of TEXT_INPUTS) {
    it(name, async () => {
      const got: Record<string, unknown> = {};
      const want: Record<string, unknown> = {};
      for (const kind of ['missing', 'dir', 'not_utf8'] as const) {
        const f = BAD[kind]!.file;
        got[kind] = await run(argv(f));
        want[kind] = { code: 2, stdout: '', stderr: `loretrace: ${READER[kind]!(f)}\n` };
      }
      expect(got).toEqual(want);
    });
  }

  it('--config: the same codes, the message naming the config file', async () => {
    const index = (f: string) => run(['index', ...L, '--config', f]);
    const f = BAD.not_utf8!.file;
    expect(await index(f)).toEqual({ code: 2, stdout: '', stderr: `loretrace: config file ${READER.not_utf8!(f)}\n` });
    const e = BAD.empty!.file;
    expect(await index(e)).toEqual({ code: 2, stdout: '', stderr: `loretrace: config file ${READER.empty!(e)}\n` });
  });
});

describe('JSON of the wrong shape: exit 1, naming the pointer and what was expected', () => {
  const f = BAD.wrong_shape!.file;
  const cases: [string, string[], string][] = [
    ['traverse --policy', ['traverse', ...L, '--policy', f], `${f}: a policy file must be a JSON object (a traversal_policy, or { traversal_policy, allowed_scope? }) [bad_policy]`],
    ['traverse --packet', ['traverse', ...L, '--packet', f], `${f} has no /lore_access/traversal_policy to apply [bad_policy]`],
    ['traverse --projected-context', ['traverse', ...L, '--policy', POLICY, '--projected-context', f], `projected context / must be a JSON object (got an array) (${f}, pointer /) [bad_input]`],
    ['retrieve --packet', ['retrieve', ...L, '--packet', f, '--policy', POLICY, '--out', out()], `${f}: the draft violates the responder packet contract (1 error): / [schema.type] the document is of type array [invalid_draft]\n  / [schema.type] the document is of type array (expected object)`],
    ['retrieve --policy', ['retrieve', ...L, '--packet', DRAFT, '--policy', f, '--out', out()], `${f}: a policy file must be a JSON object (a traversal_policy, or { traversal_policy, allowed_scope? }) [bad_policy]`],
    ['verify-trace', ['verify-trace', ...L, f], `${f}: expected a JSON object (a responder output capture, a capture fragment, a traverse result or a ledger export), got an array [bad_trace_input]`],
    ['capture --packet', ['capture', ...L, '--packet', f, '--raw-output', RAW, '--out', out(), '--model-family', 'm', '--reviewer', 'r'], `${f} is not a valid responder packet (1 error; first at /: the document is of type array); nothing assembled [invalid_packet]\n  / [schema.type] the document is of type array (expected object)`],
    // One error, said in the singular (never "1 error(s)").
    ['serve --packet', ['serve', ...L, '--packet', f, '--ledger', out('.jsonl'), '--mcp'], `packet ${f} is not a valid responder packet (1 error: /: the document is of type array); the proxy serves only valid packets [packet_invalid]`],
  ];
  for (const [name, argv, message] of cases) {
    it(name, async () => {
      expect(await run(argv)).toEqual({ code: 1, stdout: '', stderr: `loretrace: ${message}\n` });
    });
  }

  it('validate reports the file invalid with its rule', async () => {
    expect(await run(['validate', 'packet', f])).toEqual({
      code: 1,
      stdout: `${f}: /: [schema.type] the document is of type array (expected object)\n1 packet: 0 valid, 1 invalid; 1 error (schema.type: 1); 0 warnings\n`,
      stderr: '',
    });
  });
});

describe('validate on a document of another kind: exit 1, with a hint naming its schema_version and the right kind', () => {
  it('a packet given to validate capture', async () => {
    const r = await run(['validate', 'capture', RESEARCH]);
    expect([r.code, r.stdout.split('\n')[0], r.stderr]).toEqual([1, `${RESEARCH}: hint: its schema_version is ghostlight.responder_packet.v0, a packet: did you mean 'loretrace validate packet'?`, '']);
  });
});

describe('commands that check many inputs list an unusable one in their report and exit 1', () => {
  const f = BAD.missing!.file;
  it('capture check and lock verify count it unreadable', async () => {
    const check = await run(['capture', 'check', ...L, f]);
    expect([check.code, check.stdout.trimEnd().split('\n').pop()]).toEqual([1, 'totals: captures 1, ok 0, integrity_only 0, review_unchecked 0, failed 1, invalid 0, trace_failed 0, lock_drift 0, review_mismatch 0, unreadable 1']);
    const lock = await run(['lock', 'verify', f]);
    expect([lock.code, lock.stdout.trimEnd().split('\n').pop()]).toEqual([1, 'totals: 1 lock, ok 0, integrity_only 0, drift 0, unreadable 1, files_unchanged 0, files_changed 0, files_missing 0, snapshot_unchanged 0, snapshot_changed 0, snapshot_not_checked 0, snapshot_other_vault 0, snapshot_not_recorded 0, authorship_failed 0']);
  });
});

describe('a folder holding nothing to check is a usage error (exit 2)', () => {
  const d = BAD.dir!.file;
  it('verify-trace, capture check and lock verify', async () => {
    expect(await run(['verify-trace', ...L, d])).toEqual({ code: 2, stdout: '', stderr: `loretrace: nothing to verify in ${d}: folders are searched for *.json and *.jsonl trace inputs and found none; see 'loretrace verify-trace --help' [usage]\n` });
    expect(await run(['capture', 'check', ...L, d])).toEqual({ code: 2, stdout: '', stderr: `loretrace: no capture found in ${d} (folders are searched for *.capture.json); see 'loretrace capture check --help' [usage]\n` });
    expect(await run(['lock', 'verify', d])).toEqual({ code: 2, stdout: '', stderr: `loretrace: no lock file found in ${d} (folders are searched for *.lock.json); see 'loretrace lock verify --help' [usage]\n` });
  });

  it('verify-trace on a folder whose only JSON holds no trace (a coverage report): usage, the file named once', async () => {
    const folder = mkdtempSync(join(T, 'no-trace-'));
    writeFileSync(join(folder, 'coverage.json'), '{"schema_version": "loretrace.coverage.v1"}\n');
    expect(await run(['verify-trace', ...L, folder])).toEqual({ code: 2, stdout: '', stderr: `loretrace: nothing to verify in ${folder}: no file found there holds a research_trace; skipped 1 file (first: ${folder}/coverage.json: no research_trace to verify (looked at /research_trace); a loretrace.coverage.v1 document holds no trace); see 'loretrace verify-trace --help' [usage]\n` });
  });
});

describe('an output that would be overwritten: exit 2 in every command', () => {
  it('an existing ledger is ledger_exists (serve, retrieve), as an existing output is output_exists', async () => {
    const ledger = join(T, 'existing.ledger.jsonl');
    writeFileSync(ledger, '');
    expect(await run(['serve', ...L, '--packet', RESEARCH, '--ledger', ledger, '--http', '127.0.0.1:0'])).toEqual({
      code: 2, stdout: '', stderr: `loretrace: ledger ${ledger} already exists; a ledger is never appended to or overwritten — choose a new file [ledger_exists]\n`,
    });
    expect(await run(['retrieve', ...L, '--packet', DRAFT, '--policy', POLICY, '--out', out(), '--ledger', ledger])).toEqual({
      code: 2, stdout: '', stderr: `loretrace: ledger ${ledger} already exists; a ledger is never appended to or overwritten — choose a new file with --ledger (nothing written) [ledger_exists]\n`,
    });
    const existing = BAD.empty!.file;
    expect(await run(['ledger', 'export', 'lore-fixtures/ledgers/none.jsonl', ...L, '--out', existing])).toEqual({
      code: 2, stdout: '', stderr: `loretrace: --out ${existing} already exists; outputs are never overwritten silently: pass --force to replace an unlocked file, or choose a new name (nothing written) [output_exists]\n`,
    });
  });
});

describe('a ledger output named like a folder or a lock: exit 2, nothing written', () => {
  it('serve and retrieve refuse a --ledger ending in a separator; serve refuses a --ledger named *.lock.json as retrieve does', async () => {
    const folder = join(T, 'ledger-folder') + '/';
    const folderSaid = (command: string) => ({
      code: 2, stdout: '', stderr: `loretrace: --ledger ${folder} ends in a path separator, so it names a folder; expected the path of a file to write (nothing written); see 'loretrace ${command} --help' [usage]\n`,
    });
    expect(await run(['serve', ...L, '--packet', RESEARCH, '--ledger', folder, '--http', '127.0.0.1:0'])).toEqual(folderSaid('serve'));
    expect(await run(['retrieve', ...L, '--packet', DRAFT, '--policy', POLICY, '--out', out(), '--ledger', folder])).toEqual(folderSaid('retrieve'));
    const lockLike = join(T, 'session.lock.json');
    const named = 'ends in .lock.json, the name loretrace gives lock files: folder scans (lock verify, capture check, the never-overwrite check) would take it for a lock; choose a name that does not end in .lock.json (nothing written) [output_named_like_lock]';
    expect(await run(['serve', ...L, '--packet', RESEARCH, '--ledger', lockLike, '--http', '127.0.0.1:0'])).toEqual({ code: 2, stdout: '', stderr: `loretrace: --ledger ${lockLike} ${named}\n` });
    expect(await run(['retrieve', ...L, '--packet', DRAFT, '--policy', POLICY, '--out', out(), '--ledger', lockLike])).toEqual({ code: 2, stdout: '', stderr: `loretrace: --ledger ${lockLike} ${named}\n` });
    expect([existsSync(join(T, 'ledger-folder')), existsSync(lockLike)]).toEqual([false, false]);
  });
});

describe('a vault path that is not a folder: exit 2, vault_not_a_directory naming it, never a config file\'s ENOTDIR', () => {
  it('ledger verify --lore, search --lore and serve --lore naming a file or a FIFO', async () => {
    const file = BAD.empty!.file;
    const fifo = join(T, 'vault.fifo');
    execFileSync('mkfifo', [fifo]);
    const ledger = join(REPO, 'lore-fixtures', 'artifacts', 'ledger.harbor.jsonl');
    for (const lore of [file, fifo]) {
      const said = { code: 2, stdout: '', stderr: `loretrace: vault path is not a directory: ${lore} [vault_not_a_directory]\n` };
      expect(await run(['ledger', 'verify', ledger, '--lore', lore])).toEqual(said);
      expect(await run(['search', 'Fences', '--lore', lore, '--index-dir', IDX])).toEqual(said);
      expect(await run(['serve', '--lore', lore, '--index-dir', IDX, '--packet', RESEARCH, '--ledger', out('.jsonl'), '--http', '127.0.0.1:0'])).toEqual(said);
    }
  });
});

describe('--head that is no record_hash: a usage error naming the option (exit 2)', () => {
  it('ledger verify and ledger export refuse --head "" and a short or upper-case hash', async () => {
    const ledger = join(REPO, 'lore-fixtures', 'artifacts', 'ledger.harbor.jsonl');
    for (const head of ['', 'abc', 'A'.repeat(64)]) {
      const said = { code: 2, stdout: '', stderr: `loretrace: --head ${JSON.stringify(head)} is not a record_hash; expected the 64 lower-case hex digits of the last record's record_hash, as ledger verify and ledger export print it [bad_option]\n` };
      expect(await run(['ledger', 'verify', ledger, '--head', head])).toEqual(said);
      expect(await run(['ledger', 'export', ledger, ...L, '--out', out(), '--head', head])).toEqual(said);
    }
  });
});

describe('an output folder that is a file: exit 2, nothing written', () => {
  it('--index-dir that is a file, or under one, names the path and what is there, never the system\'s ENOTDIR', async () => {
    const file = out('.txt');
    writeFileSync(file, 'not a folder');
    expect(await run(['index', '--lore', FIXTURE_VAULT, '--index-dir', file])).toEqual({ code: 2, stdout: '', stderr: `loretrace: index directory ${file} is not a directory: it is a file [index_dir_not_a_directory]\n` });
    expect(await run(['search', 'Fences', '--lore', FIXTURE_VAULT, '--index-dir', join(file, 'sub', 'deeper')])).toEqual({
      code: 2, stdout: '', stderr: `loretrace: index directory ${join(file, 'sub', 'deeper')} is not a directory: ${file} is a file [index_dir_not_a_directory]\n`,
    });
  });
  it('coverage --out names the file and what was expected, never the system\'s ENOTDIR on a temp name', async () => {
    const file = BAD.empty!.file;
    const r = await run(['coverage', ...L, BAD.wrong_shape!.file, '--out', file]);
    expect([r.code, r.stderr]).toEqual([2, `loretrace: cannot write the coverage report into ${file}: it exists and is not a folder; expected a folder, or a path that does not exist yet (nothing written) [coverage_unwritable]\n`]);
  });
});

describe('files named by what they are, not by an option the user did not give', () => {
  it('capture --raw-output - names standard input <stdin>', async () => {
    const capture = (stdin: Buffer) => run(['capture', ...L, '--packet', DRAFT, '--raw-output', '-', '--out', out(), '--model-family', 'm', '--reviewer', 'r'], stdin);
    expect(await capture(Buffer.from([0x7b, 0xff, 0x7d]))).toEqual({
      code: 1, stdout: '', stderr: 'loretrace: <stdin> is not UTF-8 text; the raw output is kept byte for byte in a JSON string, which holds only Unicode text [raw_output_not_utf8]\n',
    });
    const notJson = await capture(Buffer.from('hello'));
    expect([notJson.code, notJson.stderr.split(' breaks ')[0]]).toEqual([1, 'loretrace: <stdin>']);
  });

  it('retrieve --batch names a derived output path "the output packet (under --out-dir)", never --out', async () => {
    const outDir = join(T, 'batch');
    const taken = join(outDir, 'packets', 'brinefall-intake.turn-01.mara-voss.packet.json');
    mkdirSync(taken, { recursive: true });
    const r = await run(['retrieve', ...L, '--batch', 'lore-fixtures/batch', '--policy', POLICY, '--out-dir', outDir]);
    const line = r.stdout.split('\n').find((l) => l.includes('turn-01'));
    expect([r.code, line]).toEqual([1, `  failed   lore-fixtures/batch/packets/brinefall-intake.turn-01.mara-voss.draft.packet.json: the output packet (under --out-dir) ${taken} is a directory; expected the path of a JSON file to write (nothing written) [usage]`]);
  });
});

describe('a check that passes only on integrity (a ledger, no trusted key) exits 1; --integrity-only makes it 0', () => {
  // README "Exit codes": the command ran and the answer is no — nobody checked who wrote the ledger.
  const ledger = join(REPO, 'lore-fixtures', 'artifacts', 'ledger.harbor.jsonl');
  it('ledger verify and verify-trace', async () => {
    for (const argv of [['ledger', 'verify', ledger], ['verify-trace', ...L, ledger]]) {
      const plain = await run(argv);
      expect([plain.code, plain.stderr, plain.stdout.includes('UNAUTHENTICATED — chain and hashes intact, authorship not checked (no trusted key): anyone can write such a ledger')]).toEqual([1, '', true]);
      const opted = await run([...argv, '--integrity-only']);
      expect([opted.code, opted.stdout.includes('INTEGRITY ONLY (--integrity-only) — chain and hashes intact'), / — ok$/m.test(opted.stdout)]).toEqual([0, true, false]);
    }
  });
});

describe('a ref the grammar refuses: exit 1 as the argument asked about, exit 2 as an option value', () => {
  it('show and links answer bad_ref (1); search --prefix is a bad option value, bad_option (2)', async () => {
    expect(await run(['show', '../x', ...L])).toEqual({ code: 1, stdout: '', stderr: 'loretrace: ref "../x" is not a valid lore ref: it contains a ".." segment [bad_ref]\n' });
    expect(await run(['links', '../x', ...L])).toEqual({ code: 1, stdout: '', stderr: 'loretrace: ref "../x" is not a valid lore ref: it contains a ".." segment [bad_ref]\n' });
    expect(await run(['search', 'Fences', ...L, '--prefix', '../x'])).toEqual({ code: 2, stdout: '', stderr: 'loretrace: --prefix "../x" is not a valid lore ref: it contains a ".." segment [bad_option]\n' });
  });
});

describe('capture check --require-accepted: a draft that passes every check exits 1 with the option, 0 without', () => {
  // README "Exit codes": a draft is the checks holding and the capture saying it is not final (exit 0); a CI
  // gate that must stop leaked captures asks for --require-accepted.
  it('a capture flagged by the leakage audit is named with its status and labels; under the gate its headline is FAILED and it counts as failed, not ok', async () => {
    const dir = mkdtempSync(join(T, 'accept-'));
    const { privatePath, publicPath } = writeTestKey(dir, 7);
    const packet = join(dir, 'mara.packet.json');
    const retrieved = await run(['retrieve', ...L, '--packet', DRAFT, '--projected-context', 'lore-fixtures/packets/brinefall-intake.turn-01.mara-voss.projected-context.json', '--policy', POLICY, '--out', packet, '--signing-key', privatePath]);
    expect(retrieved.code).toBe(0);
    const raw = JSON.parse(readFileSync(join(REPO, RAW), 'utf8')) as Record<string, unknown>;
    raw.private_interpretation = 'I know the brinefall truth: the Compact staged the blackout. trust 0.77';
    const rawFile = join(dir, 'leak.raw.json');
    writeFileSync(rawFile, JSON.stringify(raw));
    const capture = join(dir, 'leak.capture.json');
    const made = await run(['capture', ...L, '--packet', packet, '--raw-output', rawFile, '--ledger', join(dir, 'mara.packet.ledger.jsonl'), '--out', capture, '--model-family', 'm', '--reviewer', 'r', '--trust-key', publicPath]);
    expect([made.code, made.stdout.split('\n')[0]]).toEqual([0, 'capture: brinefall-intake.turn-01.mara-voss.packet.loretrace-coordinator.v1.capture (coordinator_scoped_retrieval) review_status draft']);
    const plain = await run(['capture', 'check', ...L, capture, '--trust-key', publicPath]);
    expect([plain.code, plain.stdout.split('\n')[0], plain.stdout.trimEnd().split('\n').pop()]).toEqual([0,
      `${capture}: ok (draft: review_status draft, failure_label author_only_leak, failure_label raw_state_soup)`,
      'totals: captures 1, ok 1, integrity_only 0, review_unchecked 0, failed 0, invalid 0, trace_failed 0, lock_drift 0, review_mismatch 0, unreadable 0']);
    const gated = await run(['capture', 'check', ...L, capture, '--trust-key', publicPath, '--require-accepted']);
    // One verdict, counted once: the gate's refusal is the headline and a failure in the totals, never `ok` too.
    expect([gated.code, ...gated.stdout.split('\n').slice(0, 2), gated.stdout.trimEnd().split('\n').pop()]).toEqual([1,
      `${capture}: FAILED (draft: review_status draft, failure_label author_only_leak, failure_label raw_state_soup)`,
      '  not accepted: review_status draft (failure_labels author_only_leak, raw_state_soup) — FAILED (--require-accepted)',
      'totals: captures 1, ok 0, integrity_only 0, review_unchecked 0, failed 1, invalid 0, trace_failed 0, lock_drift 0, review_mismatch 0, unreadable 0, not_accepted 1']);
  });
});

describe('a ledger whose first line is torn: exit 1, saying no record verifies', () => {
  it('ledger verify names no placeholder ids and no seq -1', async () => {
    const torn = join(T, 'torn.ledger.jsonl');
    writeFileSync(torn, '{"seq":0,"ty');
    expect(await run(['ledger', 'verify', torn])).toEqual({ code: 1, stderr: '', stdout: [
      `${torn}: INVALID — first bad seq 0; 0 records verify (no record verifies)`,
      '  ledger: no SESSION_OPENED record verifies, so its ledger id, packet and snapshot are unknown',
      '  tool calls: 0 (ok 0, refused 0)',
      '  authorship not checked: the chain does not verify',
      `${torn}:1: [ledger_torn_record] line 1 (seq 0) is an incomplete record with no line break — the writer stopped mid-record; no record verifies`,
      '',
    ].join('\n') });
  });
});

describe('show and links look a name up with diacritics folded, as search folds terms', () => {
  it('"Framgang Charter" names Search/Framgång Charter.md (exit 0)', async () => {
    const shown = await run(['show', 'Framgang Charter', ...L]);
    expect([shown.code, shown.stdout.split('\n')[0], shown.stderr]).toEqual([0, 'FixtureLore:Search/Framgång Charter.md  (lines 1-3, title "Framgång Charter")', '']);
    const links = await run(['links', 'Framgang Charter', ...L, '--json']);
    expect([links.code, links.stderr, links.stdout.includes('Search/Framgång Charter.md')]).toEqual([0, '', true]);
  });
});
