/**
 * No output is written through a symbolic link (src/safe-write.ts): every writer — `ledger export --out`,
 * `coverage --out`, `serve --ledger`, `retrieve --out`, `retrieve --capture-out` — refuses a target that is a
 * symlink, or lies under a symlinked folder, with `output_symlink` (exit 2), and the link's target is left
 * exactly as it was.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { assertNoSymlinkOnPath, checkOutputPath, makeOutputFolder, writeFileNoFollow } from '../src/safe-write.js';
import { LedgerWriter } from '../src/receipts/ledger.js';
import { FIXTURE_VAULT, PROXY_PACKET, tempDir } from './helpers/proxy.js';
import { FIXTURES, REPO } from './helpers/shared.js';

const PACKETS = join(FIXTURES, 'packets');
const LEDGER = join(FIXTURES, 'artifacts', 'ledger.harbor.jsonl');
const RETRIEVE = (out: string, capture?: string) => [
  'retrieve', '--lore', FIXTURE_VAULT, '--packet', join(PACKETS, 'brinefall-intake.turn-01.mara-voss.draft.packet.json'),
  '--projected-context', join(PACKETS, 'brinefall-intake.turn-01.mara-voss.projected-context.json'), '--policy', join(PACKETS, 'brinefall-intake.policy.json'),
  '--out', out, ...(capture !== undefined ? ['--capture-out', capture] : []),
];

let tmp: { dir: string; cleanup: () => void };
let victim: string;
let victimDir: string;
const VICTIM_TEXT = 'precious: must never be overwritten\n';

beforeAll(() => {
  tmp = tempDir('loretrace-outputs-');
  victimDir = join(tmp.dir, 'victim-dir');
  mkdirSync(victimDir);
  victim = join(tmp.dir, 'victim.txt');
  writeFileSync(victim, VICTIM_TEXT);
  symlinkSync(victim, join(tmp.dir, 'link.json'));
  symlinkSync(victimDir, join(tmp.dir, 'linked-dir'));
});
afterAll(() => tmp.cleanup());

async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), cwd: REPO, env: {} });
  return { code, stdout, stderr };
}

const WRITERS: { name: string; argv: (target: string) => string[]; file: (base: string) => string }[] = [
  { name: 'ledger export --out', argv: (t) => ['ledger', 'export', LEDGER, '--out', t], file: (b) => join(b, 'fragment.json') },
  { name: 'coverage --out', argv: (t) => ['coverage', '--lore', FIXTURE_VAULT, LEDGER, '--out', t], file: (b) => join(b, 'cov') },
  { name: 'serve --ledger', argv: (t) => ['serve', '--lore', FIXTURE_VAULT, '--packet', PROXY_PACKET, '--ledger', t, '--mcp'], file: (b) => join(b, 'session.jsonl') },
  { name: 'retrieve --out', argv: (t) => RETRIEVE(t), file: (b) => join(b, 'packet.json') },
  { name: 'retrieve --capture-out', argv: (t) => RETRIEVE(join(tmp.dir, 'real-out', 'packet.json'), t), file: (b) => join(b, 'lore_access.json') },
];

describe.each(WRITERS)('$name', ({ argv, file }) => {
  it('refuses a target that is a symlink (output_symlink, exit 2), leaving the link target untouched', async () => {
    // coverage writes into a folder: its symlinked target is the folder link.
    const target = file('') === 'cov' ? join(tmp.dir, 'linked-dir') : join(tmp.dir, 'link.json');
    const r = await run(argv(target));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^loretrace: cannot write .* is a symbolic link; loretrace never writes through a symbolic link — give the real path \(nothing written\) \[output_symlink\]\n$/);
    expect(readFileSync(victim, 'utf8')).toBe(VICTIM_TEXT);
    expect(readdirSync(victimDir)).toEqual([]);
  });

  it('refuses a target under a symlinked folder, naming the folder', async () => {
    const target = file(join(tmp.dir, 'linked-dir'));
    const r = await run(argv(target));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${join(tmp.dir, 'linked-dir')} (on the path of ${target}) is a symbolic link`);
    expect(r.stderr.trim().endsWith('[output_symlink]')).toBe(true);
    expect(readdirSync(victimDir)).toEqual([]);
  });
});

describe('an output named like a lock file', () => {
  it.each([
    ['retrieve --out', () => RETRIEVE(join(tmp.dir, 'named', 'packet.lock.json')), '--out', 'packet.lock.json'],
    ['retrieve --capture-out', () => RETRIEVE(join(tmp.dir, 'named', 'packet.json'), join(tmp.dir, 'named', 'fragment.lock.json')), '--capture-out', 'fragment.lock.json'],
    ['retrieve --ledger', () => [...RETRIEVE(join(tmp.dir, 'named', 'packet.json')), '--ledger', join(tmp.dir, 'named', 'l.lock.json')], '--ledger', 'l.lock.json'],
    ['ledger export --out', () => ['ledger', 'export', LEDGER, '--out', join(tmp.dir, 'named', 'fragment.lock.json')], '--out', 'fragment.lock.json'],
    ['capture --out', () => ['capture', '--lore', FIXTURE_VAULT, '--packet', PROXY_PACKET, '--raw-output', LEDGER, '--out', join(tmp.dir, 'named', 'c.lock.json'), '--model-family', 'm', '--reviewer', 'r'], '--out', 'c.lock.json'],
  ])('%s x.lock.json is refused (output_named_like_lock, exit 2), nothing written', async (_name, argv, option, name) => {
    const r = await run(argv());
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`loretrace: ${option} ${join(tmp.dir, 'named', name)} ends in .lock.json, the name loretrace gives lock files: folder scans (lock verify, capture check, the never-overwrite check) would take it for a lock; choose a name that does not end in .lock.json (nothing written) [output_named_like_lock]\n`);
    expect(existsSync(join(tmp.dir, 'named'))).toBe(false);
  });
});

describe('the shared helpers', () => {
  it('writeFileNoFollow writes a regular file (creating folders) and replaces a regular file', async () => {
    const p = join(tmp.dir, 'new', 'deep', 'a.json');
    await writeFileNoFollow(p, 'one\n');
    await writeFileNoFollow(p, 'two\n');
    expect(readFileSync(p, 'utf8')).toBe('two\n');
    expect(readdirSync(join(tmp.dir, 'new', 'deep'))).toEqual(['a.json']);
  });

  it('refuses a dangling symlink too (it would create the file where the link points)', async () => {
    symlinkSync(join(tmp.dir, 'nowhere.json'), join(tmp.dir, 'dangling.json'));
    expect(() => assertNoSymlinkOnPath(join(tmp.dir, 'dangling.json'))).toThrow(expect.objectContaining({ code: 'output_symlink', exitCode: 2 }));
    await expect(writeFileNoFollow(join(tmp.dir, 'dangling.json'), 'x')).rejects.toMatchObject({ code: 'output_symlink' });
    expect(existsSync(join(tmp.dir, 'nowhere.json'))).toBe(false);
  });

  it('LedgerWriter.create refuses a symlinked ledger path', () => {
    expect(() => LedgerWriter.create(join(tmp.dir, 'link.json'))).toThrow(expect.objectContaining({ code: 'output_symlink' }));
    expect(() => LedgerWriter.create(join(tmp.dir, 'linked-dir', 'l.jsonl'))).toThrow(expect.objectContaining({ code: 'output_symlink' }));
    expect(readFileSync(victim, 'utf8')).toBe(VICTIM_TEXT);
  });
});

// Node's recursive mkdir retries for ever where the file system answers ENOENT for a folder it will not
// create (/proc): every writer makes folders one level at a time and checks the path before building.
const HAS_PROC = existsSync('/proc/self');
const UNWRITABLE = (what: string, folder: string, reason: string) => `loretrace: ${what}: cannot create ${folder}: ${reason}; expected an output path whose folder exists or can be created (nothing written) [output_unwritable]\n`;

describe('an output whose folder cannot be created', () => {
  const PROC_WRITERS: [string, string[], string][] = [
    ['retrieve --out', RETRIEVE('/proc/nope/x.json'), '--out /proc/nope/x.json'],
    ['retrieve --out and --capture-out', RETRIEVE('/proc/nope/p.json', '/proc/nope/la.json'), '--out /proc/nope/p.json'],
    ['retrieve --batch --out-dir', ['retrieve', '--lore', FIXTURE_VAULT, '--batch', PACKETS, '--out-dir', '/proc/nope/b'], '--out-dir /proc/nope/b'],
    ['coverage --out', ['coverage', '--lore', FIXTURE_VAULT, LEDGER, '--out', '/proc/nope/cov'], '--out /proc/nope/cov'],
    ['keygen --out (file)', ['keygen', '--out', '/proc/nope/k.key.pem'], '--out /proc/nope/k.key.pem'],
    ['keygen --out (folder)', ['keygen', '--out', '/proc/nope/'], '--out /proc/nope/'],
    ['ledger export --out', ['ledger', 'export', LEDGER, '--out', '/proc/nope/f.json'], '--out /proc/nope/f.json'],
    ['capture --out', ['capture', '--lore', FIXTURE_VAULT, '--packet', PROXY_PACKET, '--raw-output', LEDGER, '--out', '/proc/nope/c.json', '--model-family', 'm', '--reviewer', 'r'], '--out /proc/nope/c.json'],
  ];
  it.skipIf(!HAS_PROC).each(PROC_WRITERS)(`%s under /proc fails at once (output_unwritable, exit 2), not a hang${HAS_PROC ? '' : ' (skipped: these cases need a Linux /proc, absent here)'}`, async (_name, argv, what) => {
    const started = Date.now();
    const r = await run(argv);
    expect(r).toEqual({ code: 2, stdout: '', stderr: UNWRITABLE(what, '/proc/nope', '/proc does not take new entries (ENOENT)') });
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it.skipIf(!HAS_PROC)('an existing folder that takes no new entry (/proc) is refused before the build, naming it', async () => {
    const r = await run(RETRIEVE('/proc/x.json'));
    expect(r).toEqual({ code: 2, stdout: '', stderr: 'loretrace: --out /proc/x.json: cannot write in /proc: /proc does not take new entries (ENOENT); expected an output path whose folder exists or can be created (nothing written) [output_unwritable]\n' });
  });

  it('a file where a folder of --out goes is refused at once for coverage, keygen and ledger export', async () => {
    const file = join(tmp.dir, 'a-file');
    writeFileSync(file, 'x');
    const cov = await run(['coverage', '--lore', FIXTURE_VAULT, LEDGER, '--out', join(file, 'cov')]);
    expect(cov).toEqual({ code: 2, stdout: '', stderr: UNWRITABLE(`--out ${join(file, 'cov')}`, join(file, 'cov'), `${file} is not a folder`) });
    const key = await run(['keygen', '--out', join(file, 'sub', 'k.key.pem')]);
    expect(key).toEqual({ code: 2, stdout: '', stderr: UNWRITABLE(`--out ${join(file, 'sub', 'k.key.pem')}`, join(file, 'sub'), `${file} is not a folder`) });
    const exp = await run(['ledger', 'export', LEDGER, '--out', join(file, 'f.json')]);
    expect(exp).toEqual({ code: 2, stdout: '', stderr: UNWRITABLE(`--out ${join(file, 'f.json')}`, file, `${file} is not a folder`) });
    expect(readFileSync(file, 'utf8')).toBe('x');
  });

  it('makeOutputFolder and checkOutputPath make or probe folders one level at a time and leave nothing behind', () => {
    const deep = join(tmp.dir, 'made', 'a', 'b');
    checkOutputPath(join(deep, 'x.json'), '--out x');
    expect(existsSync(join(tmp.dir, 'made'))).toBe(false);
    makeOutputFolder(deep, '--out x');
    expect(statSync(deep).isDirectory()).toBe(true);
    checkOutputPath(join(deep, 'x.json'), '--out x');
    expect(readdirSync(deep)).toEqual([]);
  });
});
