/**
 * Where trusted keys come from, and what a key file may hold (src/cli/keys.ts, src/receipts/signing.ts,
 * docs/RECEIPTS.md "The rule: a success verdict needs established authorship"):
 *
 * - `LORETRACE_TRUSTED_KEYS` unset or `''` lists no file (the config's `trusted_keys` apply); a value with an
 *   empty entry (`":"`, `"a:"`, `"a::b"`) is `bad_option`, exit 2, naming the variable — never a silent
 *   "no trusted key";
 * - a key file holds exactly one PEM block and nothing else: two public keys, a public key beside a private
 *   one, or text before or after the block is refused (`bad_trust_key` / `bad_signing_key`, exit 2), naming the
 *   file — node:crypto would silently read the first block only;
 * - an error about a file the variable named says so (`LORETRACE_TRUSTED_KEYS entry 2 of 2: …`), one about a
 *   config entry names the config file and `/trusted_keys/<n>`;
 * - trust never comes from inside the vault under verification: the vault's own `loretrace.config.json`, a
 *   `--config` inside the vault and a `--config` entry naming a key file inside the vault are ignored with a
 *   warning naming each entry, so a key planted in the vault with a config trusting it verifies nothing; reports
 *   name the real source of trust (`--trust-key`, `LORETRACE_TRUSTED_KEYS`, `--config <file>`).
 */
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readSigningKey, readTrustedKey } from '../src/receipts/signing.js';
import { main } from '../src/cli/main.js';
import { FIXTURE_VAULT, fixtureSession, R, tempDir } from './helpers/proxy.js';
import { testKey, writeTestKey } from './helpers/keys.js';

const KEY1 = testKey(1);
const KEY2 = testKey(2);

let tmp: { dir: string; cleanup: () => void };
beforeEach(() => {
  tmp = tempDir('loretrace-trust-files-');
});
afterEach(() => tmp.cleanup());

/** A closed ledger of one read on FixtureLore, signed by key 1, as `session.jsonl`. */
async function signedLedger(): Promise<void> {
  const s = await fixtureSession({ ledgerPath: join(tmp.dir, 'session.jsonl'), signer: KEY1.signer });
  await s.call('lore_read', { ref: R.territories });
  await s.close();
}

async function cli(argv: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd: tmp.dir, env: { ...process.env, LORETRACE_SIGNING_KEY: '', LORETRACE_TRUSTED_KEYS: '', ...env } });
  return { code, stdout, stderr };
}

/** `text` written as `name` in the temp folder; returns its path. */
function write(name: string, text: string): string {
  const path = join(tmp.dir, name);
  writeFileSync(path, text);
  return path;
}

describe('LORETRACE_TRUSTED_KEYS', () => {
  it('an empty entry is bad_option (exit 2) naming the variable and the entry; "" is unset', async () => {
    const k1 = writeTestKey(tmp.dir, 1);
    await signedLedger();
    const verify = ['ledger', 'verify', 'session.jsonl'];
    const only = await cli(verify, { LORETRACE_TRUSTED_KEYS: delimiter });
    expect(only).toEqual({ code: 2, stdout: '', stderr: `loretrace: LORETRACE_TRUSTED_KEYS=${JSON.stringify(delimiter)}: entry 1 of 2 is empty; expected public-key PEM files separated by ${JSON.stringify(delimiter)}, each non-empty (unset the variable, or set it to "", to use the config's trusted_keys) [bad_option]\n` });
    const trailing = await cli(verify, { LORETRACE_TRUSTED_KEYS: `${k1.publicPath}${delimiter}` });
    expect([trailing.code, trailing.stderr]).toEqual([2, `loretrace: LORETRACE_TRUSTED_KEYS=${JSON.stringify(k1.publicPath + delimiter)}: entry 2 of 2 is empty; expected public-key PEM files separated by ${JSON.stringify(delimiter)}, each non-empty (unset the variable, or set it to "", to use the config's trusted_keys) [bad_option]\n`]);
    const middle = await cli(verify, { LORETRACE_TRUSTED_KEYS: [k1.publicPath, '', k1.publicPath].join(delimiter) });
    expect([middle.code, middle.stderr.match(/entry \d of \d is empty/)?.[0], middle.stderr.endsWith('[bad_option]\n')]).toEqual([2, 'entry 2 of 3 is empty', true]);
    const leading = await cli(verify, { LORETRACE_TRUSTED_KEYS: `${delimiter}${k1.publicPath}` });
    expect([leading.code, leading.stderr.match(/entry \d of \d is empty/)?.[0]]).toEqual([2, 'entry 1 of 2 is empty']);
    // The empty string is unset: no trusted key from the variable, so the verdict says UNAUTHENTICATED (exit 1).
    const unset = await cli(verify, { LORETRACE_TRUSTED_KEYS: '' });
    expect([unset.code, unset.stdout.split('\n')[0]?.split(';')[0]]).toEqual([1, 'session.jsonl: UNAUTHENTICATED — chain and hashes intact, authorship not checked (no trusted key): anyone can write such a ledger']);
    // --trust-key replaces the variable, so a bad variable is not read then.
    const flag = await cli([...verify, '--trust-key', k1.publicPath], { LORETRACE_TRUSTED_KEYS: delimiter });
    expect(flag.code).toBe(0);
    const good = await cli(verify, { LORETRACE_TRUSTED_KEYS: k1.publicPath });
    expect(good.code).toBe(0);
  });

  it("a bad file it names is reported with the variable's entry, the code and exit of the file's problem", async () => {
    const k1 = writeTestKey(tmp.dir, 1);
    await signedLedger();
    const missing = await cli(['ledger', 'verify', 'session.jsonl'], { LORETRACE_TRUSTED_KEYS: [k1.publicPath, 'nope.pub.pem'].join(delimiter) });
    expect([missing.code, missing.stderr.startsWith('loretrace: LORETRACE_TRUSTED_KEYS entry 2 of 2: cannot read nope.pub.pem'), missing.stderr.endsWith('[file_not_found]\n')]).toEqual([2, true, true]);
    const priv = await cli(['ledger', 'verify', 'session.jsonl'], { LORETRACE_TRUSTED_KEYS: k1.privatePath });
    expect(priv).toEqual({ code: 2, stdout: '', stderr: `loretrace: LORETRACE_TRUSTED_KEYS entry 1 of 1: ${k1.privatePath} is a private key; --trust-key takes the public key (the .pub.pem loretrace keygen wrote beside it) — keep the private key with the runner [bad_trust_key]\n` });
  });
});

describe('a trusted key file holds exactly one PEM public key', () => {
  it('two public keys in one file: bad_trust_key naming the file, the count and the lines (not the first key alone)', async () => {
    await signedLedger();
    const both = write('both.pub.pem', KEY1.publicPem + KEY2.publicPem);
    expect(() => readTrustedKey(KEY1.publicPem + KEY2.publicPem, 'both.pub.pem')).toThrow(expect.objectContaining({
      code: 'bad_trust_key',
      exitCode: 2,
      message: 'both.pub.pem holds 2 public keys (lines 1-3, lines 4-6); a trusted key file holds exactly one key — give each key its own file and its own --trust-key (or trusted_keys entry)',
      details: { file: 'both.pub.pem', line: 4, expected: 'exactly one PEM public key block and nothing else in the file' },
    }));
    const flag = await cli(['ledger', 'verify', 'session.jsonl', '--trust-key', both]);
    expect(flag).toEqual({ code: 2, stdout: '', stderr: `loretrace: ${both} holds 2 public keys (lines 1-3, lines 4-6); a trusted key file holds exactly one key — give each key its own file and its own --trust-key (or trusted_keys entry) [bad_trust_key]\n` });
    const env = await cli(['ledger', 'verify', 'session.jsonl'], { LORETRACE_TRUSTED_KEYS: both });
    expect([env.code, env.stderr]).toEqual([2, `loretrace: LORETRACE_TRUSTED_KEYS entry 1 of 1: ${both} holds 2 public keys (lines 1-3, lines 4-6); a trusted key file holds exactly one key — give each key its own file and its own --trust-key (or trusted_keys entry) [bad_trust_key]\n`]);
    mkdirSync(join(tmp.dir, 'conf'));
    writeFileSync(join(tmp.dir, 'conf', 'trust.json'), JSON.stringify({ trusted_keys: ['../both.pub.pem'] }));
    const config = await cli(['ledger', 'verify', 'session.jsonl', '--config', 'conf/trust.json']);
    expect([config.code, config.stderr]).toEqual([2, `loretrace: config file ${join(tmp.dir, 'conf', 'trust.json')} /trusted_keys/0: ${both} holds 2 public keys (lines 1-3, lines 4-6); a trusted key file holds exactly one key — give each key its own file and its own --trust-key (or trusted_keys entry) [bad_trust_key]\n`]);
  });

  it('a private key anywhere in the file, after or before the public key: bad_trust_key "is a private key"', async () => {
    await signedLedger();
    for (const [name, text] of [['pub-then-key.pem', KEY1.publicPem + KEY1.privatePem], ['key-then-pub.pem', KEY1.privatePem + KEY1.publicPem]] as const) {
      const path = write(name, text);
      const r = await cli(['ledger', 'verify', 'session.jsonl', '--trust-key', path]);
      expect(r).toEqual({ code: 2, stdout: '', stderr: `loretrace: ${path} is a private key; --trust-key takes the public key (the .pub.pem loretrace keygen wrote beside it) — keep the private key with the runner [bad_trust_key]\n` });
    }
  });

  it('text after the END line or before the BEGIN line: bad_trust_key naming the file and the line; blank lines and CRLF are fine', async () => {
    await signedLedger();
    const trailing = write('trailing.pub.pem', `${KEY1.publicPem}garbage\n`);
    const r = await cli(['ledger', 'verify', 'session.jsonl', '--trust-key', trailing]);
    expect(r).toEqual({ code: 2, stdout: '', stderr: `loretrace: ${trailing} line 4: text after its -----END PUBLIC KEY----- line; --trust-key takes a file holding one PEM public key and nothing else (as loretrace keygen writes it) [bad_trust_key]\n` });
    expect(() => readTrustedKey(`note: runner key\n${KEY1.publicPem}`, 'lead.pub.pem')).toThrow(expect.objectContaining({
      code: 'bad_trust_key',
      message: 'lead.pub.pem line 1: text before its -----BEGIN PUBLIC KEY----- line; --trust-key takes a file holding one PEM public key and nothing else (as loretrace keygen writes it)',
      details: { file: 'lead.pub.pem', line: 1, expected: 'exactly one PEM public key block and nothing else in the file' },
    }));
    expect(readTrustedKey(`\n${KEY1.publicPem}\n\n`, 'blank.pub.pem')).toEqual({ ...KEY1.trusted, source: 'blank.pub.pem' });
    expect(readTrustedKey(KEY1.publicPem.replace(/\n/g, '\r\n'), 'crlf.pub.pem').key_id).toBe('34750f98bd59fcfc');
    const ok = await cli(['ledger', 'verify', 'session.jsonl', '--trust-key', write('clean.pub.pem', KEY1.publicPem)]);
    expect(ok.code).toBe(0);
  });
});

describe('a signing key file holds exactly one PEM private key', () => {
  it('two private keys, a private key beside its public key, or trailing text: bad_signing_key naming the file', () => {
    expect(() => readSigningKey(KEY1.privatePem + KEY2.privatePem, 'two.key.pem')).toThrow(expect.objectContaining({
      code: 'bad_signing_key',
      exitCode: 2,
      message: 'two.key.pem holds 2 private keys (lines 1-3, lines 4-6); a signing key file holds exactly one key — give each key its own file',
    }));
    expect(() => readSigningKey(KEY1.privatePem + KEY1.publicPem, 'pair.pem')).toThrow(expect.objectContaining({
      code: 'bad_signing_key',
      message: 'pair.pem holds 2 PEM blocks (PRIVATE KEY lines 1-3, PUBLIC KEY lines 4-6); a signing key file holds exactly one key — give each key its own file',
    }));
    expect(() => readSigningKey(`${KEY1.privatePem}x\n`, 'tail.key.pem')).toThrow(expect.objectContaining({
      code: 'bad_signing_key',
      message: 'tail.key.pem line 4: text after its -----END PRIVATE KEY----- line; --signing-key takes a file holding one PEM private key and nothing else (as loretrace keygen writes it)',
    }));
    expect(() => readSigningKey(KEY1.publicPem, 'k.pub.pem')).toThrow(expect.objectContaining({ code: 'bad_signing_key', message: expect.stringContaining('k.pub.pem is a public key') }));
    expect(readSigningKey(KEY1.privatePem, 'k.key.pem').key_id).toBe('34750f98bd59fcfc');
  });
});

describe('the vault under verification never vouches for itself', () => {
  const UNAUTHENTICATED = 'UNAUTHENTICATED — chain and hashes intact, authorship not checked (no trusted key): anyone can write such a ledger';
  const HINT = 'a trusted key comes from outside the vault under verification: --trust-key, LORETRACE_TRUSTED_KEYS, or --config <file> outside the vault';

  /**
   * A copy of FixtureLore holding the attacker's public key (key 2) and a `loretrace.config.json` that trusts it,
   * and `forged.jsonl`: a closed session on that vault signed by the attacker's key (the runner holds key 1).
   */
  async function plantedVault(): Promise<{ vault: string; config: string; planted: string }> {
    const vault = join(tmp.dir, 'vx', 'FixtureLore');
    cpSync(FIXTURE_VAULT, vault, { recursive: true });
    mkdirSync(join(vault, '.keys'));
    const planted = write('vx/FixtureLore/.keys/attacker.pub.pem', KEY2.publicPem);
    const config = write('vx/FixtureLore/loretrace.config.json', JSON.stringify({ trusted_keys: ['.keys/attacker.pub.pem'] }));
    const s = await fixtureSession({ ledgerPath: join(tmp.dir, 'forged.jsonl'), signer: KEY2.signer, lore: vault });
    await s.call('lore_read', { ref: R.territories });
    await s.call('lore_read', { ref: R.factions });
    await s.close();
    return { vault, config, planted };
  }

  it("a key planted in the vault and trusted by the vault's own config: UNAUTHENTICATED, exit 1, a warning naming the ignored entry", async () => {
    const { config, planted } = await plantedVault();
    const r = await cli(['ledger', 'verify', 'forged.jsonl', '--lore', 'vx/FixtureLore']);
    expect([r.code, r.stdout.split('\n')[0]!.split(';')[0], r.stdout.split('\n')[3], r.stderr]).toEqual([1, `forged.jsonl: ${UNAUTHENTICATED}`,
      '  authorship not checked (no --trust-key); signed by key 6a3803d5f059902a, signature valid',
      `loretrace: warning: ${config} /trusted_keys/0 ".keys/attacker.pub.pem" (${planted}): ignored — the vault's own config never supplies trust; ${HINT}\n`]);
    expect(JSON.parse((await cli(['ledger', 'verify', 'forged.jsonl', '--lore', 'vx/FixtureLore', '--json'])).stdout)).toMatchObject({ valid: true, verdict: 'integrity_only', authorship: { checked: false } });
    // The runner's real key refuses it, as before.
    const k1 = writeTestKey(tmp.dir, 1);
    const keyed = await cli(['ledger', 'verify', 'forged.jsonl', '--lore', 'vx/FixtureLore', '--trust-key', k1.publicPath]);
    expect([keyed.code, keyed.stdout.split('\n')[0], keyed.stderr]).toEqual([1, 'forged.jsonl: INVALID — chain intact, authorship ledger_untrusted_signer; 6 records verify (seq 0-5)', '']);
    // verify-trace on the exported fragment: no "checked against --trust-key" that nobody gave.
    expect((await cli(['ledger', 'export', 'forged.jsonl', '--lore', 'vx/FixtureLore', '--out', 'forged.frag.json'])).code).toBe(0);
    const trace = await cli(['verify-trace', '--lore', 'vx/FixtureLore', 'forged.frag.json']);
    expect([trace.code, trace.stdout.split('\n').filter((l) => l.startsWith('  authorship')), trace.stdout.trimEnd().split('\n').at(-1)]).toEqual([1,
      ['  authorship not checked (no --trust-key)'], `runner_captured: 6 entries: 6 ledger-backed and verified, 0 failed — ${UNAUTHENTICATED}`]);
    expect(trace.stderr).toContain(`(${planted}): ignored — the vault's own config never supplies trust;`);
  });

  it('--config inside the vault, or a --config entry naming a key file inside it: ignored with a warning, exit 1', async () => {
    const { config, planted } = await plantedVault();
    const inside = await cli(['ledger', 'verify', 'forged.jsonl', '--lore', 'vx/FixtureLore', '--config', 'vx/FixtureLore/loretrace.config.json']);
    expect([inside.code, inside.stdout.split('\n')[0]!.split(';')[0], inside.stderr]).toEqual([1, `forged.jsonl: ${UNAUTHENTICATED}`,
      `loretrace: warning: ${config} /trusted_keys/0 ".keys/attacker.pub.pem" (${planted}): ignored — the config file is inside the vault vx/FixtureLore; ${HINT}\n`]);
    mkdirSync(join(tmp.dir, 'conf'));
    const outside = write('conf/trust.json', JSON.stringify({ trusted_keys: ['../vx/FixtureLore/.keys/attacker.pub.pem'] }));
    const pointing = await cli(['ledger', 'verify', 'forged.jsonl', '--lore', 'vx/FixtureLore', '--config', 'conf/trust.json']);
    expect([pointing.code, pointing.stdout.split('\n')[0]!.split(';')[0], pointing.stderr]).toEqual([1, `forged.jsonl: ${UNAUTHENTICATED}`,
      `loretrace: warning: ${outside} /trusted_keys/0 "../vx/FixtureLore/.keys/attacker.pub.pem" (${planted}): ignored — the key file is inside the vault vx/FixtureLore; ${HINT}\n`]);
  });

  it('a key from outside the vault is trusted, and every report names where it came from', async () => {
    await plantedVault();
    const k2 = writeTestKey(tmp.dir, 2);
    mkdirSync(join(tmp.dir, 'conf'));
    const conf = write('conf/ok.json', JSON.stringify({ trusted_keys: ['../key2.pub.pem'] }));
    const viaConfig = await cli(['ledger', 'verify', 'forged.jsonl', '--lore', 'vx/FixtureLore', '--config', 'conf/ok.json']);
    expect([viaConfig.code, viaConfig.stdout.split('\n')[3]]).toEqual([0, `  authorship: signed by trusted key 6a3803d5f059902a (${k2.publicPath}, from --config ${conf})`]);
    const viaEnv = await cli(['ledger', 'verify', 'forged.jsonl', '--lore', 'vx/FixtureLore'], { LORETRACE_TRUSTED_KEYS: k2.publicPath });
    expect([viaEnv.code, viaEnv.stdout.split('\n')[3], viaEnv.stderr]).toEqual([0, `  authorship: signed by trusted key 6a3803d5f059902a (${k2.publicPath}, from LORETRACE_TRUSTED_KEYS)`, '']);
    expect((await cli(['ledger', 'export', 'forged.jsonl', '--lore', 'vx/FixtureLore', '--out', 'ok.frag.json'])).code).toBe(0);
    const authorship = async (args: string[], env: Record<string, string> = {}) => {
      const r = await cli(['verify-trace', '--lore', 'vx/FixtureLore', 'ok.frag.json', ...args], env);
      return [r.code, r.stdout.split('\n').filter((l) => l.startsWith('  authorship'))];
    };
    expect(await authorship(['--trust-key', k2.publicPath])).toEqual([0, ['  authorship: checked against --trust-key 6a3803d5f059902a']]);
    expect(await authorship([], { LORETRACE_TRUSTED_KEYS: k2.publicPath })).toEqual([0, ['  authorship: checked against LORETRACE_TRUSTED_KEYS 6a3803d5f059902a']]);
    expect(await authorship(['--config', 'conf/ok.json'])).toEqual([0, [`  authorship: checked against --config ${conf} 6a3803d5f059902a`]]);
  });
});
