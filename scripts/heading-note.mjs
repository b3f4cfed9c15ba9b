#!/usr/bin/env node
// Peak RSS of indexing one generated note of nothing but headings (docs/PARSING.md "Pathological markdown",
// the headings threshold): `node scripts/heading-note.mjs [--mib 8] [--line "# h"] [--dist dist]`. Writes the
// note into a fresh temp vault (never into the repo), indexes it cold with `indexVault` (no persisted index, no
// workers) in a child process, and prints its chunks, findings, CPU seconds (process.cpuUsage) and peak RSS
// (process.resourceUsage().maxRSS). `--dist` names another build (e.g. one of an earlier commit) to compare.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};

if (args[0] === '--child') {
  const [, dist, vault] = args;
  const { indexVault } = await import(pathToFileURL(join(dist, 'indexer', 'build.js')).href);
  const t0 = process.cpuUsage();
  const index = await indexVault(vault, { persist: false, workers: false });
  const cpu = process.cpuUsage(t0);
  const findings = index.findings.filter((f) => f.code === 'pathological_markdown').map((f) => f.message.slice(0, 90));
  console.log(JSON.stringify({ chunks: index.chunks.length, headings: index.notes[0].headings.length, findings, cpu_s: +((cpu.user + cpu.system) / 1e6).toFixed(1), peak_rss_mib: Math.round(process.resourceUsage().maxRSS / 1024) }));
} else {
  const mib = Number(opt('mib', '8'));
  const line = `${opt('line', '# h')}\n`;
  const dist = resolve(opt('dist', 'dist'));
  const dir = mkdtempSync(join(tmpdir(), 'loretrace-heading-note-'));
  try {
    mkdirSync(join(dir, 'Lore'));
    const count = Math.floor((mib * 1024 * 1024) / Buffer.byteLength(line));
    writeFileSync(join(dir, 'Lore', 'Headings.md'), line.repeat(count));
    const r = spawnSync(process.execPath, ['--max-old-space-size=12288', new URL(import.meta.url).pathname, '--child', dist, join(dir, 'Lore')], { encoding: 'utf8' });
    console.log(JSON.stringify({ note: `${count} lines of ${JSON.stringify(line.trimEnd())}, ${count * Buffer.byteLength(line)} bytes`, dist: opt('dist', 'dist') }));
    process.stdout.write(r.stdout || `exit ${r.status} ${r.signal ?? ''} ${(r.stderr || '').split('\n').slice(-3).join(' ')}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
