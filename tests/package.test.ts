/**
 * The published package as a user gets it: `npm pack` of this checkout (dist/ built by `npm test` first;
 * `prepack` builds it when packing by hand), installed into an empty strict TypeScript project, must
 * install without an install-time script (npm 11 warns about a `prepare` it has not been allowed to run)
 * and type-check against the public `.d.ts` files without `skipLibCheck` and without loretrace's dev
 * dependencies (`@types/express` among them), then run its CLI.
 *
 * Offline: the tarball is unpacked into the consumer's node_modules as npm would, and the package's
 * runtime dependencies (every non-dev package of package-lock.json) are linked from this checkout's
 * node_modules, so no registry is needed; the consumer's own tools are `typescript` and `@types/node`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from './helpers/shared.js';

const NODE_MODULES = realpathSync(join(REPO, 'node_modules'));
let work: string;
let consumer: string;
let packed: { files: { path: string }[]; filename: string };

/** The top-level packages of package-lock.json that a production install gets (not `dev`, not `devOptional`). */
function runtimePackages(): string[] {
  const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean; devOptional?: boolean }> };
  return Object.entries(lock.packages)
    .filter(([k, v]) => k.startsWith('node_modules/') && !k.slice('node_modules/'.length).includes('/node_modules/') && !v.dev && !v.devOptional)
    .map(([k]) => k.slice('node_modules/'.length))
    .sort();
}

function link(name: string): void {
  const at = join(consumer, 'node_modules', name);
  mkdirSync(dirname(at), { recursive: true });
  symlinkSync(join(NODE_MODULES, name), at, 'dir');
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'lt-package-'));
  // --ignore-scripts: pack the dist/ this run built (prepack would build the same again).
  const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  packed = (JSON.parse(out) as (typeof packed)[])[0]!;
  consumer = join(work, 'consumer');
  mkdirSync(join(consumer, 'node_modules', 'loretrace'), { recursive: true });
  execFileSync('tar', ['-xzf', join(work, packed.filename), '-C', join(consumer, 'node_modules', 'loretrace'), '--strip-components=1']);
  for (const name of runtimePackages()) link(name);
  for (const tool of ['typescript', '@types/node']) link(tool);
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }));
  writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', noEmit: true, skipLibCheck: false, types: ['node']},
    include: ['index.ts'],
  }));
  writeFileSync(join(consumer, 'index.ts'), [
    "import * as loretrace from 'loretrace';",
    "import { indexVault, search, startHttpServer, openProxySession } from 'loretrace';",
    "import type { HttpServerHandle, HttpServerOptions, VaultIndex } from 'loretrace';",
    'const options: HttpServerOptions = { host: "127.0.0.1", port: 0 };',
    'export async function use(root: string): Promise<number> {',
    '  const index: VaultIndex = await indexVault(root);',
    '  const handle: HttpServerHandle | null = null;',
    '  void handle; void options; void startHttpServer; void openProxySession;',
    "  return search(index, 'harbor', { k: 1 }).length + Object.keys(loretrace).length;",
    '}',
    '',
  ].join('\n'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the packed package', () => {
  it('ships dist/ with its .d.ts files, bin and schemas, and no install-time script', () => {
    const files = packed.files.map((f) => f.path);
    for (const f of ['bin/loretrace.js', 'dist/index.js', 'dist/index.d.ts', 'dist/server/http.d.ts', 'dist/cli/main.js', 'schemas/ledger-record.schema.json', 'package.json', 'README.md']) expect(files).toContain(f);
    expect(files.filter((f) => f.startsWith('src/') || f.startsWith('tests/'))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(consumer, 'node_modules', 'loretrace', 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(Object.keys(manifest.scripts).filter((s) => ['preinstall', 'install', 'postinstall', 'prepare'].includes(s))).toEqual([]);
    expect(manifest.scripts.prepack).toBe('npm run build');
  });

  it('type-checks in a strict consumer without skipLibCheck and without loretrace\'s dev dependencies', () => {
    expect(runtimePackages()).not.toContain('@types/express');
    const tsc = join(consumer, 'node_modules', 'typescript', 'bin', 'tsc');
    const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: consumer, encoding: 'utf8' });
    expect({ status: r.status, output: `${r.stdout}${r.stderr}` }).toEqual({ status: 0, output: '' });
  }, 600_000); // tsc checks every .d.ts of the dependencies (about 400 files): minutes on a loaded machine

  it('runs its CLI from the installed files', () => {
    const r = spawnSync(process.execPath, [join(consumer, 'node_modules', 'loretrace', 'bin', 'loretrace.js'), '--version'], { cwd: consumer, encoding: 'utf8' });
    expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({ status: 0, stdout: '0.1.0\n', stderr: '' });
  });
});
