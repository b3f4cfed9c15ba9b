#!/usr/bin/env node
/**
 * `node scripts/big-note.mjs` — what one big note costs the indexer (docs/PARSING.md "Size cap, measured").
 *
 * Writes a temp vault holding one generated note of ordinary lore of each requested size (heading sections
 * of paragraphs with wikilinks, a bold field line and a short list — the shape of the real vault's notes,
 * repeated; plus a small note linking to it), then indexes it in a fresh child process per size with
 * `max_file_bytes` raised above the note, and reports the child's wall time, CPU time
 * (`process.cpuUsage`, user + system) and peak RSS (`process.resourceUsage().maxRSS`, worker threads
 * included). Each child runs `indexVault` once, cold, into its own index folder, in the calling thread
 * (`workers: false`) so one parse is measured, not the pool.
 *
 * Usage: node scripts/big-note.mjs [--sizes 5,16] [--dist dist] [--json] [--cpu-prof <dir>] [--keep]
 *   --sizes     note sizes in MB (10^6 bytes), comma-separated (default 5,16)
 *   --dist      the loretrace build to measure (default dist; run `npm run build` first)
 *   --json      print one JSON document instead of the table
 *   --cpu-prof  write a V8 CPU profile of each child into this folder
 *   --keep      keep the temp vaults
 * Exit 0 measured, 1 a child failed, 2 usage error. Deterministic input: the same sizes give the same
 * bytes. Timings depend on the machine; they are reported, never asserted.
 */
import { parseArgs } from 'node:util';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * One note of `bytes` bytes (ASCII, so bytes = characters) of ordinary lore: sections of a heading, two
 * paragraphs with wikilinks, a field line and a three-item list, numbered so that no two sections are
 * the same text. The last section is cut at a line end to fit.
 * @param {number} bytes
 * @returns {string}
 */
export function bigLoreNote(bytes) {
  const parts = ['# Big Chronicle\n\nThe chronicle of the long years, in one note.\n'];
  let size = parts[0].length;
  for (let i = 1; size < bytes; i++) {
    const section = [
      '',
      `## Year ${i} of the Reckoning`,
      '',
      `In year ${i} the [[Meridian Compact]] renewed its charter at the harbor of Brinefall, and the`,
      `[[Open Ledger Society|ledger keepers]] recorded ${i * 7} rescues along the drowned coast.`,
      '',
      `**Primary actors:** [[Mara Voss]], [[Kestrel Route Accord]], envoy ${i}.`,
      '',
      `- the tide tables of season ${i} were copied twice`,
      `- a salvage claim went to the [[Cetacean Navigators]]`,
      `- nothing else of note happened in year ${i}`,
      '',
    ].join('\n');
    parts.push(section);
    size += section.length;
  }
  let text = parts.join('');
  if (text.length > bytes) text = text.slice(0, text.lastIndexOf('\n', bytes - 1) + 1);
  return text;
}

/** Findings counted by code, codes sorted. */
function countByCode(findings) {
  const out = {};
  for (const f of [...findings].sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0))) out[f.code] = (out[f.code] ?? 0) + 1;
  return out;
}

/** The notes the generated note links to, so that every link resolves (as in a real vault). */
const LINKED = ['Meridian Compact', 'Open Ledger Society', 'Mara Voss', 'Kestrel Route Accord', 'Cetacean Navigators'];

/** The child: index the vault once and print the measurement as JSON on stdout. */
async function child(dist, vault, cap) {
  const lib = await import(pathToFileURL(join(dist, 'index.js')).href);
  const indexDir = join(vault, '..', `index-${process.pid}`);
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const index = await lib.indexVault(vault, { config: { max_file_bytes: cap }, indexDir, workers: false });
  const wall = Number(process.hrtime.bigint() - t0) / 1e6;
  const cpu = process.cpuUsage(cpu0);
  const stats = lib.indexStats ? lib.indexStats(index) : null;
  process.stdout.write(JSON.stringify({
    wall_ms: Math.round(wall), cpu_ms: Math.round((cpu.user + cpu.system) / 1000),
    peak_rss_mib: Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10,
    chunks: stats?.chunks ?? null, links: stats?.links ?? null,
    findings: countByCode(index.findings),
  }));
}

async function main() {
  let args;
  try {
    args = parseArgs({
      options: {
        sizes: { type: 'string', default: '5,16' },
        dist: { type: 'string', default: join(REPO, 'dist') },
        json: { type: 'boolean', default: false },
        'cpu-prof': { type: 'string' },
        keep: { type: 'boolean', default: false },
        child: { type: 'string' },
        cap: { type: 'string' },
      },
      strict: true,
    }).values;
  } catch (e) {
    process.stderr.write(`big-note: ${e.message}\n`);
    process.exit(2);
  }
  const dist = resolve(args.dist);
  if (args.child) return child(dist, args.child, Number(args.cap));
  const sizes = args.sizes.split(',').map((s) => Number(s));
  if (sizes.some((s) => !(s > 0))) {
    process.stderr.write(`big-note: --sizes must be positive numbers of MB (got ${JSON.stringify(args.sizes)})\n`);
    process.exit(2);
  }
  const tmp = mkdtempSync(join(tmpdir(), 'lt-big-note-'));
  const rows = [];
  let failed = false;
  try {
    for (const mb of sizes) {
      const bytes = Math.round(mb * 1e6);
      const vault = join(tmp, `v${mb}`, 'BigLore');
      mkdirSync(vault, { recursive: true });
      writeFileSync(join(vault, 'Big Chronicle.md'), bigLoreNote(bytes));
      writeFileSync(join(vault, 'Reader.md'), '# Reader\n\nSee [[Big Chronicle#Year 3 of the Reckoning]].\n');
      for (const name of LINKED) writeFileSync(join(vault, `${name}.md`), `# ${name}\n\nA note the chronicle links to.\n`);
      const node = ['--expose-gc'];
      if (args['cpu-prof']) node.push('--cpu-prof', `--cpu-prof-dir=${resolve(args['cpu-prof'])}`, `--cpu-prof-name=big-note-${mb}MB.cpuprofile`);
      const r = spawnSync(process.execPath, [...node, fileURLToPath(import.meta.url), '--child', vault, '--cap', String(bytes + 1024), '--dist', dist], { encoding: 'utf8', maxBuffer: 1 << 24 });
      if (r.status !== 0) {
        failed = true;
        rows.push({ size_mb: mb, bytes, error: (r.stderr || `exit ${r.status}`).trim().split('\n').slice(-3).join(' ') });
        continue;
      }
      rows.push({ size_mb: mb, bytes, ...JSON.parse(r.stdout) });
    }
  } finally {
    if (!args.keep) rmSync(tmp, { recursive: true, force: true });
  }
  const doc = { node: process.version, platform: `${process.platform} ${process.arch}`, rows };
  if (args.json) process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
  else {
    process.stdout.write(`| note | wall | CPU | peak RSS | chunks | links |\n| ---: | ---: | ---: | ---: | ---: | ---: |\n`);
    for (const r of rows) {
      process.stdout.write(r.error ? `| ${r.size_mb} MB | failed: ${r.error} | | | | |\n`
        : `| ${r.size_mb} MB (${r.bytes} bytes) | ${(r.wall_ms / 1000).toFixed(1)} s | ${(r.cpu_ms / 1000).toFixed(1)} s | ${r.peak_rss_mib} MiB | ${r.chunks} | ${r.links} |\n`);
    }
  }
  process.exit(failed ? 1 : 0);
}

// Run only as a script: tests and the bench import bigLoreNote.
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) await main();
