/**
 * JSON input documents (src/contracts/json-input.ts): duplicate keys are `duplicate_key` everywhere
 * (pointer + the lines of both occurrences), invalid UTF-8 is `not_utf8` with the byte offset, and a file over
 * the input cap (8 MiB default, LORETRACE_MAX_INPUT_BYTES) is `input_too_large` before a byte is read —
 * through `validate`, `traverse`, `retrieve`, `serve` (openProxySession), the vault config and coverage; a
 * document nested deeper than 256 levels is `json_too_deep` (line, column, pointer), a capture's raw output too.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { decodeJsonDocument, firstInvalidUtf8, DEFAULT_MAX_INPUT_BYTES } from '../src/contracts/json-input.js';
import { MAX_JSON_DEPTH } from '../src/contracts/rules.js';
import { parseVaultConfig } from '../src/vault/config.js';
import { recogniseArtifact } from '../src/coverage/artifacts.js';
import { BIN, FIXTURE_VAULT, PROXY_PACKET, fixtureSession, tempDir } from './helpers/proxy.js';
import { REPO } from './helpers/shared.js';

let tmp: { dir: string; cleanup: () => void };
beforeAll(() => {
  tmp = tempDir('loretrace-json-input-');
});
afterAll(() => tmp.cleanup());

async function run(argv: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), cwd: REPO, env });
  return { code, stdout, stderr };
}

const write = (name: string, data: string | Uint8Array) => {
  const p = join(tmp.dir, name);
  writeFileSync(p, data);
  return p;
};

/** The proxy packet with `allowed_prefixes` listed twice: narrow first (line 21), the whole world second (line 22). */
function widenedPacket(): string {
  const text = readFileSync(PROXY_PACKET, 'utf8');
  return text.replace('      "allowed_prefixes": [\n', '      "allowed_prefixes": ["FixtureLore:World/Pre-Elysium/Territories.md"],\n      "allowed_prefixes": [\n        "FixtureLore:World/",\n');
}

/** Line 2 of a pretty-printed document repeated as line 3 (the first key twice). */
function repeatFirstKey(file: string): { text: string; key: string } {
  const lines = readFileSync(file, 'utf8').split('\n');
  const key = /^\s*"([^"]+)"/.exec(lines[1]!)![1]!;
  return { text: [lines[0], lines[1], ...lines.slice(1)].join('\n'), key };
}

const PREFIXES = '/lore_access/traversal_policy/allowed_prefixes';
const MARA_PACKET = join(REPO, 'lore-fixtures', 'packets', 'brinefall-intake.turn-01.mara-voss.draft.packet.json');

describe('duplicate keys', () => {
  it('validate packet refuses the narrow-then-wide allowed_prefixes packet, naming the pointer and both lines', async () => {
    const p = write('wide.packet.json', widenedPacket());
    const r = await run(['validate', 'packet', p]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`loretrace: ${p} has the key ${PREFIXES} twice (line 21 and line 22); JSON readers keep only the last value, so the document would not be applied as a reviewer reads it; expected each key once per object [duplicate_key]\n`);
  });

  it('serve refuses it before indexing, and writes no ledger', async () => {
    const p = write('wide2.packet.json', widenedPacket());
    const ledger = join(tmp.dir, 'wide.jsonl');
    await expect(fixtureSession({ ledgerPath: ledger, packetPath: p })).rejects.toMatchObject({ code: 'duplicate_key', exitCode: 2, details: { pointer: PREFIXES, line: 22, data: { first_line: 21, second_line: 22 } } });
    expect(existsSync(ledger)).toBe(false);
    const cli = await run(['serve', '--lore', FIXTURE_VAULT, '--packet', p, '--ledger', ledger, '--mcp']);
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain('[duplicate_key]');
    expect(existsSync(ledger)).toBe(false);
  });

  it.each([
    ['traverse --packet', (p: string) => ['traverse', '--lore', FIXTURE_VAULT, '--packet', p]],
    ['retrieve --packet', (p: string) => ['retrieve', '--lore', FIXTURE_VAULT, '--packet', p, '--out', join(tmp.dir, 'never.json')]],
  ])('%s refuses it with duplicate_key', async (_name, argv) => {
    const p = write('wide3.packet.json', widenedPacket());
    const r = await run(argv(p));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`has the key ${PREFIXES} twice (line 21 and line 22)`);
    expect(r.stderr.trim().endsWith('[duplicate_key]')).toBe(true);
    expect(existsSync(join(tmp.dir, 'never.json'))).toBe(false);
  });

  it.each([
    ['capture', join(REPO, 'tests', 'fixtures', 'validate', 'research.capture.json')],
    ['projected-context', join(REPO, 'tests', 'fixtures', 'validate', 'projected-context.json')],
    ['capture-fragment', join(REPO, 'tests', 'fixtures', 'validate', 'coordinator.fragment.json')],
  ])('validate %s refuses a repeated first key with its pointer and lines 2 and 3', async (kind, file) => {
    const { text, key } = repeatFirstKey(file);
    const p = write(`dup.${kind}.json`, text);
    const r = await run(['validate', kind, p]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`has the key /${key} twice (line 2 and line 3)`);
    expect(r.stderr.trim().endsWith('[duplicate_key]')).toBe(true);
  });

  it('traverse --policy refuses a policy with a repeated key', async () => {
    const p = write('dup.policy.json', '{\n  "max_link_depth": 1,\n  "allowed_prefixes": [],\n  "max_link_depth": 9\n}\n');
    const r = await run(['traverse', '--lore', FIXTURE_VAULT, '--policy', p]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('has the key /max_link_depth twice (line 2 and line 4)');
  });

  it('the vault config refuses a repeated key', () => {
    expect(() => parseVaultConfig('{\n"namespace": "A",\n"namespace": "B"\n}', 'c.json')).toThrow(expect.objectContaining({
      code: 'duplicate_key', exitCode: 2, details: expect.objectContaining({ pointer: '/namespace', line: 3, data: { first_line: 2, second_line: 3 } }),
    }));
  });

  it('coverage skips an artifact with a repeated key, saying duplicate_key', () => {
    const { text } = repeatFirstKey(PROXY_PACKET);
    expect(recogniseArtifact('dup.packet.json', text)).toEqual({
      file: 'dup.packet.json', reason: 'not_json',
      message: 'dup.packet.json has the key /schema_version twice (line 2 and line 3); JSON readers keep only the last value, so the document would not be applied as a reviewer reads it; expected each key once per object [duplicate_key]',
    });
  });
});

describe('strict UTF-8', () => {
  const cases: [string, number[], number][] = [
    ['a lone 0xFF', [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d], 6],
    ['an overlong "/" (C0 AF)', [0x7b, 0x22, 0xc0, 0xaf, 0x22, 0x3a, 0x31, 0x7d], 2],
    ['a UTF-16 surrogate (ED A0 80)', [0x5b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x5d], 2],
    ['a truncated 3-byte sequence at the end', [0x5b, 0x31, 0x5d, 0x20, 0xe2, 0x82], 4],
    ['a code point above U+10FFFF (F4 90)', [0x5b, 0x22, 0xf4, 0x90, 0x80, 0x80, 0x22, 0x5d], 2],
  ];
  it.each(cases)('refuses %s with not_utf8 and the byte offset', (_name, bytes, offset) => {
    const buf = Uint8Array.from(bytes);
    expect(firstInvalidUtf8(buf)).toBe(offset);
    expect(() => decodeJsonDocument(buf, 'x.json')).toThrow(expect.objectContaining({ code: 'not_utf8', exitCode: 2, details: expect.objectContaining({ data: { byte_offset: offset } }) }));
  });

  it('accepts 1- to 4-byte sequences and a BOM', () => {
    const text = '\uFEFF{"k":"aé€😀"}';
    expect(firstInvalidUtf8(Buffer.from(text, 'utf8'))).toBe(-1);
    expect(decodeJsonDocument(Buffer.from(text, 'utf8'), 'x.json')).toEqual({ k: 'aé€😀' });
  });

  it('validate packet names the offset of a bad byte in a packet', async () => {
    const good = Buffer.from(readFileSync(PROXY_PACKET, 'utf8').replace('"packet_id": "', '"packet_id": "\u0001'), 'utf8');
    const at = good.indexOf(0x01);
    good[at] = 0xfe;
    const p = write('bad-utf8.packet.json', good);
    const r = await run(['validate', 'packet', p]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`loretrace: ${p} is not UTF-8: invalid byte 0xfe at byte offset ${at} [not_utf8]\n`);
  });
});

describe('the input cap', () => {
  it('is 8 MiB by default', () => {
    expect(DEFAULT_MAX_INPUT_BYTES).toBe(8_388_608);
  });

  it('LORETRACE_MAX_INPUT_BYTES lowers it; a packet over it is refused unread', async () => {
    const size = readFileSync(PROXY_PACKET).length;
    const r = await run(['validate', 'packet', PROXY_PACKET], { LORETRACE_MAX_INPUT_BYTES: String(size - 1) });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`loretrace: ${PROXY_PACKET} is ${size} bytes, over the ${size - 1}-byte input limit; not read (set LORETRACE_MAX_INPUT_BYTES to raise it) [input_too_large]\n`);
    const ok = await run(['validate', 'packet', PROXY_PACKET], { LORETRACE_MAX_INPUT_BYTES: String(size) });
    expect(ok.code).toBe(0);
    const bad = await run(['validate', 'packet', PROXY_PACKET], { LORETRACE_MAX_INPUT_BYTES: '8MB' });
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining('LORETRACE_MAX_INPUT_BYTES must be a positive integer (bytes); got "8MB"') });
  });

  it('refuses a packet holding a 50 MB string without reading it (a child with a 64 MB heap exits 2)', () => {
    const p = join(tmp.dir, 'huge.packet.json');
    writeFileSync(p, `{"packet_id": "${'x'.repeat(50_000_000)}"}`);
    for (const argv of [['validate', 'packet', p], ['serve', '--lore', FIXTURE_VAULT, '--packet', p, '--ledger', join(tmp.dir, 'huge.jsonl'), '--mcp']]) {
      const r = spawnSync(process.execPath, ['--max-old-space-size=64', BIN, ...argv], { encoding: 'utf8', timeout: 20_000 });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('is 50000017 bytes, over the 8388608-byte input limit; not read');
      expect(r.stderr.trim().endsWith('[input_too_large]')).toBe(true);
    }
    expect(existsSync(join(tmp.dir, 'huge.jsonl'))).toBe(false);
  });
});

describe('nesting depth', () => {
  const nested = (levels: number) => `{"a":${'['.repeat(levels)}${']'.repeat(levels)}}`;

  it('reads 256 levels and refuses 257 with json_too_deep, naming the file, line, column and pointer', () => {
    expect(JSON.stringify(decodeJsonDocument(Buffer.from(nested(255)), 'ok.json'))).toBe(nested(255));
    expect(() => decodeJsonDocument(Buffer.from(nested(256)), 'deep.json')).toThrow(expect.objectContaining({
      code: 'json_too_deep', exitCode: 2,
      message: `deep.json nests deeper than ${MAX_JSON_DEPTH} arrays and objects at line 1, column 261 (pointer /a/0/0/0/0/0/…/0/0); expected a document nested at most ${MAX_JSON_DEPTH} levels deep`,
      details: expect.objectContaining({ file: 'deep.json', line: 1, pointer: `/a${'/0'.repeat(255)}` }),
    }));
    // Brackets inside strings do not count.
    expect(decodeJsonDocument(Buffer.from(JSON.stringify({ s: '['.repeat(5000) })), 'str.json')).toEqual({ s: '['.repeat(5000) });
  });

  it('capture --allow-invalid refuses a raw output nested 5,000 levels deep (no stack overflow, nothing written)', async () => {
    const raw = write('deep.raw.json', nested(5000));
    const out = join(tmp.dir, 'deep.capture.json');
    const r = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', MARA_PACKET, '--raw-output', raw, '--out', out, '--model-family', 'm', '--reviewer', 'r', '--allow-invalid', '--index-dir', join(tmp.dir, 'idx')]);
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toBe(`loretrace: ${raw} nests deeper than ${MAX_JSON_DEPTH} arrays and objects at line 1, column 261 (pointer /a/0/0/0/0/0/…/0/0); expected a document nested at most ${MAX_JSON_DEPTH} levels deep [json_too_deep]\n`);
    expect(existsSync(out)).toBe(false);
  });

  it('validate refuses a packet nested 5,000 levels deep the same way', async () => {
    const p = write('deep.packet.json', nested(5000));
    const r = await run(['validate', 'packet', p]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`loretrace: ${p} nests deeper than ${MAX_JSON_DEPTH} arrays and objects at line 1, column 261 (pointer /a/0/0/0/0/0/…/0/0); expected a document nested at most ${MAX_JSON_DEPTH} levels deep [json_too_deep]\n`);
  });
});

describe('values a JavaScript reader would lose', () => {
  it('refuses a __proto__ key (however escaped) with proto_key, naming the pointer and line, instead of dropping it', () => {
    const text = '{\n  "a": 1,\n  "b": [{"\\u005f_proto__": {"polluted": true}}]\n}';
    expect(() => decodeJsonDocument(Buffer.from(text), 'p.json')).toThrow(expect.objectContaining({
      code: 'proto_key', exitCode: 2, details: expect.objectContaining({ file: 'p.json', pointer: '/b/0/__proto__', line: 3 }),
      message: 'p.json has a key named __proto__ at /b/0/__proto__ (line 3, column 10); JavaScript readers drop it or take it for the object\'s prototype, so it would be lost; expected no key named __proto__',
    }));
    // A string value "__proto__" is data, not a key.
    expect(decodeJsonDocument(Buffer.from('{"k":"__proto__"}'), 'ok.json')).toEqual({ k: '__proto__' });
  });

  it('refuses an integer beyond 2^53 - 1 with unsafe_integer instead of rounding it; 2^53 - 1 itself and decimals are kept', () => {
    expect(() => decodeJsonDocument(Buffer.from('{"max_link_depth": 9007199254740993}'), 'big.json')).toThrow(expect.objectContaining({
      code: 'unsafe_integer', details: expect.objectContaining({ pointer: '/max_link_depth', line: 1 }),
      message: 'big.json has the integer 9007199254740993 at /max_link_depth (line 1, column 20), beyond ±9007199254740991 (2^53 − 1); it would be read rounded to 9007199254740992; expected an integer a JSON reader keeps exactly',
    }));
    expect(() => decodeJsonDocument(Buffer.from('[1, -90071992547409930]'), 'neg.json')).toThrow(expect.objectContaining({ code: 'unsafe_integer', details: expect.objectContaining({ pointer: '/1' }) }));
    expect(decodeJsonDocument(Buffer.from('[9007199254740991, -9007199254740991, 12345678901234567.5, "90071992547409930"]'), 'ok.json')).toEqual([9007199254740991, -9007199254740991, 12345678901234567.5, '90071992547409930']);
  });

  it('refuses a non-zero number that underflows to 0 (2e-400) and, in an integer field, a fraction or exponent (1.9999999999999999, 2.0, 2e0), with lossy_number naming the pointer', () => {
    expect(() => decodeJsonDocument(Buffer.from('{\n  "extra": [1, 2e-400]\n}'), 'tiny.json')).toThrow(expect.objectContaining({
      code: 'lossy_number', exitCode: 2, details: expect.objectContaining({ file: 'tiny.json', pointer: '/extra/1', line: 2 }),
      message: 'tiny.json has the number 2e-400 at /extra/1 (line 2, column 16), a non-zero number too small for a JSON reader, which reads it as 0; expected 0 written as 0, or a number of at least ±5e-324',
    }));
    expect(() => decodeJsonDocument(Buffer.from('{"max_link_depth": -0.1e-999}'), 'neg.json')).toThrow(expect.objectContaining({ code: 'lossy_number', details: expect.objectContaining({ pointer: '/max_link_depth' }) }));
    expect(() => decodeJsonDocument(Buffer.from('{"traversal_policy": {"max_link_depth": 1.9999999999999999}}'), 'p1.json')).toThrow(expect.objectContaining({
      code: 'lossy_number', exitCode: 2, details: expect.objectContaining({ pointer: '/traversal_policy/max_link_depth', line: 1 }),
      message: 'p1.json has the number 1.9999999999999999 at /traversal_policy/max_link_depth (line 1, column 41), which a JSON reader reads as the integer 2; max_link_depth must be an integer, so expected an integer literal (digits only, no fraction or exponent)',
    }));
    for (const t of ['2.0', '2e0', '20E-1']) {
      expect(() => decodeJsonDocument(Buffer.from(`{"research_trace": [{"line_start": ${t}}]}`), 'c.json')).toThrow(expect.objectContaining({ code: 'lossy_number', details: expect.objectContaining({ pointer: '/research_trace/0/line_start' }) }));
    }
    // Outside integer fields a fraction is a number; zero written any way is zero; 1.5 in an integer field is left to the schema.
    expect(decodeJsonDocument(Buffer.from('{"score": 2.0, "z": [0.0, -0e10, 0E-999], "max_link_depth": 1.5}'), 'ok.json')).toEqual({ score: 2, z: [0, -0, 0], max_link_depth: 1.5 });
  });

  it('refuses a number beyond the largest double (1e400) with non_finite_number instead of reading Infinity and writing null; 1e308 and 5e-324 are numbers', () => {
    expect(() => decodeJsonDocument(Buffer.from('{\n  "extra": [1, -1e400]\n}'), 'inf.json')).toThrow(expect.objectContaining({
      code: 'non_finite_number', exitCode: 2, details: expect.objectContaining({ file: 'inf.json', pointer: '/extra/1', line: 2 }),
      message: `inf.json has the number -1e400 at /extra/1 (line 2, column 16), beyond the largest number a JSON reader keeps (±${Number.MAX_VALUE}); it would be read as -Infinity and written back as null; expected a finite number`,
    }));
    expect(decodeJsonDocument(Buffer.from('[1e308, 5e-324]'), 'ok.json')).toEqual([1e308, 5e-324]);
  });

  it('capture --allow-invalid refuses a raw output holding 1e400 (exit 2, one line, nothing written) instead of keeping null in parsed_output', async () => {
    const raw = write('inf.raw.json', '{"spoken_text": "x", "extra": 1e400}');
    const out = join(tmp.dir, 'inf.capture.json');
    const c = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', MARA_PACKET, '--raw-output', raw, '--out', out, '--model-family', 'm', '--reviewer', 'r', '--allow-invalid', '--index-dir', join(tmp.dir, 'idx')]);
    expect([c.code, c.stderr]).toEqual([2, `loretrace: ${raw} has the number 1e400 at /extra (line 1, column 31), beyond the largest number a JSON reader keeps (±${Number.MAX_VALUE}); it would be read as Infinity and written back as null; expected a finite number [non_finite_number]\n`]);
    expect(existsSync(out)).toBe(false);
  });

  it('validate and capture refuse them through the CLI (exit 2, one line)', async () => {
    const p = write('proto.packet.json', '{"__proto__": {"packet_id": "x"}}');
    const v = await run(['validate', 'packet', p]);
    expect([v.code, v.stderr]).toEqual([2, `loretrace: ${p} has a key named __proto__ at /__proto__ (line 1, column 2); JavaScript readers drop it or take it for the object's prototype, so it would be lost; expected no key named __proto__ [proto_key]\n`]);
    const raw = write('big.raw.json', '{"spoken_text": "x", "trust": 12345678901234567890}');
    const out = join(tmp.dir, 'big.capture.json');
    const c = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', MARA_PACKET, '--raw-output', raw, '--out', out, '--model-family', 'm', '--reviewer', 'r', '--allow-invalid', '--index-dir', join(tmp.dir, 'idx')]);
    expect([c.code, c.stderr]).toEqual([2, `loretrace: ${raw} has the integer 12345678901234567890 at /trust (line 1, column 31), beyond ±9007199254740991 (2^53 − 1); it would be read rounded to 12345678901234567000; expected an integer a JSON reader keeps exactly [unsafe_integer]\n`]);
    expect(existsSync(out)).toBe(false);
  });
});
