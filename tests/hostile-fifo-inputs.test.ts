/**
 * Every file the CLI reads goes through its one checked input reader (src/cli/vault-options.ts `readInputFile`
 * over src/contracts/json-input.ts `readInputBytes`: opened O_NONBLOCK, fstat'ed, only a regular file read), so
 * a FIFO or device where an input should be is refused at once instead of blocking the command forever: the
 * `serve --token-file`, the vault's `loretrace.config.json`, and a `*.lock.json` in an output folder (which
 * the never-overwrite check reads). `capture check` and `lock verify` are covered in tests/capture.test.ts and
 * tests/lock.test.ts. FIFOs are made in a temp folder.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { lockedPaths } from '../src/receipts/lock.js';
import { FIXTURE_VAULT } from './helpers/shared.js';
import { PROXY_PACKET } from './helpers/proxy.js';

const dir = mkdtempSync(join(tmpdir(), 'loretrace-fifo-inputs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, {
    stdout: (t) => void (out += t), stderr: (t) => void (err += t), env: { LORETRACE_INDEX_DIR: join(dir, 'index') }, cwd: dir,
    readStdin: async () => new Uint8Array(),
  });
  return { code, out, err };
}

describe.skipIf(process.platform === 'win32')('CLI inputs that are FIFOs', () => {
  it('serve --token-file: exits 2 at once (usage), before a ledger is created', async () => {
    execFileSync('mkfifo', [join(dir, 'token.fifo')]);
    const r = await cli(['serve', '--lore', FIXTURE_VAULT, '--packet', PROXY_PACKET, '--ledger', 'l.jsonl', '--http', '127.0.0.1:0', '--token-file', 'token.fifo']);
    expect(r).toEqual({ code: 2, out: '', err: "loretrace: cannot read --token-file token.fifo: not a regular file; see 'loretrace serve --help' [usage]\n" });
    expect(existsSync(join(dir, 'l.jsonl'))).toBe(false);
  });

  it('a vault whose loretrace.config.json is a FIFO: bad_config (exit 2), not a blocked index', async () => {
    const vault = join(dir, 'vault');
    cpSync(join(FIXTURE_VAULT, 'World', 'Politics'), vault, { recursive: true });
    execFileSync('mkfifo', [join(vault, 'loretrace.config.json')]);
    const r = await cli(['search', '--lore', 'vault', 'harbor']);
    expect(r).toEqual({ code: 2, out: '', err: `loretrace: cannot read config file ${join(vault, 'loretrace.config.json')}: not a regular file [bad_config]\n` });
  });

  it('lockedPaths skips a *.lock.json that is a FIFO (not a lock) and still reads the real lock beside it', async () => {
    const out = join(dir, 'out');
    execFileSync('mkdir', [out]);
    execFileSync('mkfifo', [join(out, 'a.lock.json')]);
    writeFileSync(join(out, 'b.lock.json'), JSON.stringify({ schema_version: 'loretrace.lock.v1', files: [{ path: 'b.json' }] }));
    const listed = await lockedPaths(out);
    expect([...listed.entries()]).toEqual([[join(out, 'b.lock.json'), join(out, 'b.lock.json')], [join(out, 'b.json'), join(out, 'b.lock.json')]]);
  });
});
