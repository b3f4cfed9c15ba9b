#!/usr/bin/env node
/**
 * `npm run demo`: build a retrieval-augmented packet from the FixtureLore draft in lore-fixtures/packets/,
 * then verify its research trace line by line, and print a short human summary.
 *
 *   0. loretrace keygen --out .demo-out/runner.key.pem — a throwaway runner key for this demo only
 *   1. loretrace retrieve --lane coordinator_scoped_retrieval --signing-key .demo-out/runner.key.pem
 *      (draft + projected context + policy) → .demo-out/packet.coordinator.json, its signed ledger and the
 *      capture fragment .demo-out/lore_access.json
 *   2. loretrace verify-trace .demo-out/lore_access.json --ledger .demo-out/packet.coordinator.ledger.jsonl
 *      --trust-key .demo-out/runner.pub.pem (the ledger must be signed by that key: docs/RECEIPTS.md "Authorship")
 *   3. loretrace retrieve --lane responder_scoped_repository_search → .demo-out/packet.research.json
 *   4. a plain-language verdict (what was built, from which lore, that every cited line was checked),
 *      then the details (files written, verify-trace totals).
 *
 * Runs the compiled CLI (dist/, built by `npm ci` / `npm run build`) in-process. Output goes to
 * .demo-out/ (git-ignored); the index is kept in .demo-out/index so the user cache is not touched.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(REPO, '.demo-out');
const MAIN = join(REPO, 'dist', 'cli', 'main.js');
if (!existsSync(MAIN)) {
  console.error('demo: dist/cli/main.js is missing; run `npm run build` first');
  process.exit(2);
}
const { main } = await import(MAIN);

const VAULT = 'lore-fixtures/FixtureLore';
const DRAFT = 'lore-fixtures/packets/brinefall-intake.turn-01.mara-voss.draft.packet.json';
const CONTEXT = 'lore-fixtures/packets/brinefall-intake.turn-01.mara-voss.projected-context.json';
const POLICY = 'lore-fixtures/packets/brinefall-intake.policy.json';

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
const rel = (p) => relative(REPO, p).split('\\').join('/');

async function run(argv) {
  let out = '';
  let err = '';
  const code = await main(argv, { stdout: (t) => void (out += t), stderr: (t) => void (err += t), cwd: REPO, env: { ...process.env, LORETRACE_INDEX_DIR: join(OUT, 'index') } });
  return { code, out, err };
}

function fail(step, r) {
  console.error(`demo: ${step} failed (exit ${r.code})\n${r.err}${r.out}`);
  process.exit(1);
}

const packetOut = join(OUT, 'packet.coordinator.json');
const captureOut = join(OUT, 'lore_access.json');
const researchOut = join(OUT, 'packet.research.json');
const common = ['--lore', VAULT, '--packet', DRAFT, '--projected-context', CONTEXT, '--policy', POLICY];
const keyOut = join(OUT, 'runner.key.pem');
const pubOut = join(OUT, 'runner.pub.pem');

// A throwaway runner key: the run signs its ledger with it, and the check trusts only it. A real runner
// keeps its key (mode 0600) where the responder cannot read it and hands reviewers the public half.
console.log(`$ loretrace keygen --out ${rel(keyOut)}`);
const keygen = await run(['keygen', '--out', keyOut]);
if (keygen.code !== 0) fail('keygen', keygen);
process.stdout.write(keygen.out);

console.log(`\n$ loretrace retrieve ${common.join(' ')} --lane coordinator_scoped_retrieval --out ${rel(packetOut)} --capture-out ${rel(captureOut)} --signing-key ${rel(keyOut)} --json   # summarised from its JSON`);
const retrieve = await run(['retrieve', ...common, '--lane', 'coordinator_scoped_retrieval', '--out', packetOut, '--capture-out', captureOut, '--signing-key', keyOut, '--json']);
if (retrieve.code !== 0) fail('retrieve', retrieve);
const summary = JSON.parse(retrieve.out);
const packet = JSON.parse(readFileSync(packetOut, 'utf8'));
const capture = JSON.parse(readFileSync(captureOut, 'utf8'));

console.log(`\nExcerpts in the packet (${packet.visible_context.source_excerpts.length}: ${summary.stats.excerpts_kept} from the draft, ${summary.stats.excerpts_added} lore added, ${summary.stats.excerpts_withheld} withheld):`);
for (const ex of packet.visible_context.source_excerpts) {
  const first = ex.text.split('\n')[0];
  console.log(`  ${ex.ref_id}\n    ${ex.source_ref}\n    "${first.length > 90 ? first.slice(0, 89) + '…' : first}"`);
}
console.log(`\nRefs: consulted ${capture.consulted_refs.length}, followed ${capture.followed_refs.length}`);
for (const r of capture.consulted_refs) console.log(`  consulted ${r}`);
for (const r of capture.followed_refs) console.log(`  followed  ${r}`);
for (const f of summary.findings) console.log(`  ${f.severity} ${f.code}: ${f.message}`);

// retrieve records its own lookups in a hash-chained ledger beside the packet; verify-trace checks every
// runner_captured entry against it (the record that served exactly that range and text).
const ledgerOut = packetOut.replace(/\.json$/, '.ledger.jsonl');
console.log(`\n$ loretrace verify-trace --lore ${VAULT} ${rel(captureOut)} --ledger ${rel(ledgerOut)} --trust-key ${rel(pubOut)} --json   # summarised from its JSON`);
const verify = await run(['verify-trace', '--lore', VAULT, captureOut, '--ledger', ledgerOut, '--trust-key', pubOut, '--json']);
const report = JSON.parse(verify.out);
console.log(`Trace entries (${report.entries.length}):`);
for (const e of report.entries) console.log(`  ${e.disposition.padEnd(9)} ${e.trace_id}  ${e.source_path} L${e.line_start}-L${e.line_end} (chunk ${e.chunk_index})`);
console.log(`  totals: ${Object.entries(report.totals).map(([k, v]) => `${k} ${v}`).join(', ')}`);
if (verify.code !== 0) fail('verify-trace', verify);

console.log(`\n$ loretrace retrieve ${common.join(' ')} --lane responder_scoped_repository_search --out ${rel(researchOut)} --json   # summarised from its JSON`);
const research = await run(['retrieve', ...common, '--lane', 'responder_scoped_repository_search', '--out', researchOut, '--json']);
if (research.code !== 0) fail('retrieve (responder lane)', research);
const rp = JSON.parse(readFileSync(researchOut, 'utf8'));
console.log(`  lore_access.mode ${rp.lore_access.mode}, no_repo_access ${rp.isolation_requirements.no_repo_access}, ${rp.lore_access.research_instructions.length} research instructions, prompt has "## Required Lore Research": ${rp.packet_prompt_text.includes('## Required Lore Research')}`);

// The closing verdict, in plain words, before the details: what was built, from which lore, and that every
// cited line was re-read from the vault and matched.
const cited = new Set(report.entries.map((e) => e.source_path));
const lines = report.entries.reduce((n, e) => n + (e.line_end - e.line_start + 1), 0);
const failed = report.entries.length - report.totals.verified;
const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
console.log('\nVerdict');
console.log(`  Built:   a retrieval-augmented responder packet for ${packet.responder_agent_id} (${rel(packetOut)}), with ${plural(summary.stats.excerpts_added, 'lore excerpt')} added to the draft's ${plural(summary.stats.excerpts_kept, 'excerpt')}.`);
console.log(`  From:    ${plural(cited.size, 'note')} of the ${report.namespace} vault (${VAULT}, snapshot ${report.snapshot.current.slice(0, 12)}), chosen by the packet's traversal policy${summary.stats.excerpts_withheld > 0 ? `; ${plural(summary.stats.excerpts_withheld, 'excerpt')} that would have shown hidden lore ${summary.stats.excerpts_withheld === 1 ? 'was' : 'were'} left out` : ''}${summary.stats.excerpts_cut > 0 ? `; the excerpt budget (${plural(summary.budget.count, 'excerpt')}, ${summary.budget.chars} characters) left ${plural(summary.stats.excerpts_cut, 'more excerpt', 'more excerpts')} out` : ''}.`);
console.log(`  Checked: every cited line — ${plural(lines, 'line')} in ${plural(report.entries.length, 'trace entry', 'trace entries')} — was read again from the vault and ${failed === 0 ? 'matches it exactly' : `${failed} did not match`}, and ${report.totals.unbacked === 0 && report.totals.ledger_mismatch === 0 && report.totals.ledger_broken === 0 && report.totals.ledger_untrusted === 0 ? 'each entry is backed by the ledger record of the lookup that served it' : 'NOT every entry is backed by a ledger record'} (${rel(ledgerOut)}).`);
const signed = report.ledgers.length > 0 && report.ledgers.every((l) => l.authorship.status === 'trusted');
console.log(`  Signed:  ${signed ? `the ledger is signed by the runner key whose public half is ${rel(pubOut)} (a throwaway key made by loretrace keygen for this demo), so whoever holds its private key closed it; a signature names the signer, it does not show that nothing was edited before signing` : 'the ledger is NOT signed by the trusted runner key'}.`);
console.log('Details');
// Listed from the folder itself, so the line names every file the steps wrote (locks and the index too).
const written = readdirSync(OUT, { withFileTypes: true }).map((e) => `${rel(join(OUT, e.name))}${e.isDirectory() ? '/' : ''}`).sort();
console.log(`  files written: ${written.join(', ')}`);
console.log(`  verify-trace: ${Object.entries(report.totals).map(([k, v]) => `${k} ${v}`).join(', ')}`);
