/**
 * The research packet every proxy phase serves (HTTP and MCP stdio alike): the repo's proxy fixture packet
 * (lore-fixtures/packets/proxy-fixture-research.packet.json) with its lore_access replaced. Every note of
 * the first copy (`c000/`) is in allowed_scope (lore_search runs over those admitted notes, filtered out of
 * the whole ×N index; a packet must list its scope in packet_prompt_text, so a whole-vault scope at ×100 is
 * not a packet anyone would write), the prefix is `c000/`, no budgets. Server limits are raised so the rate
 * limiter and call budgets never refuse a bench call.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { listFiles } from './vault.mjs';
import { Unavailable } from './loretrace.mjs';

/** Limits raised for the bench: a call budget or rate limit must never refuse a measured call. */
export const BENCH_LIMIT_OVERRIDES = Object.freeze({
  max_calls: 1_000_000_000,
  max_results: 1_000_000_000,
  max_chars_returned: 1_000_000_000,
  rate_burst: 1_000_000_000,
  rate_per_second: 1_000_000_000,
});

/**
 * Write the bench packet for the scaled vault `root` into `workDir/bench-proxy.packet.json`.
 * Note paths come from the file list, not from an index (the calling child's RSS is the server's).
 * @param {{ root: string, packetTemplate: string, workDir: string }} o
 * @returns {Promise<{ packetPath: string, scopeNotes: number }>}
 * @throws {Unavailable} when the template packet is absent
 */
export async function writeBenchPacket({ root, packetTemplate, workDir }) {
  if (!existsSync(packetTemplate)) throw new Unavailable(`packet template ${packetTemplate} not found`);
  const packet = JSON.parse(await readFile(packetTemplate, 'utf8'));
  const all = (await listFiles(root)).map((p) => p.normalize('NFC'));
  const ns = basename(root);
  const copy = all[0].split('/')[0];
  const notes = all.filter((p) => p.startsWith(`${copy}/`));
  const la = packet.lore_access;
  packet.packet_id = 'loretrace-bench.proxy.packet.research.v0';
  la.allowed_scope = notes.map((p) => `${ns}:${p}`);
  la.traversal_policy = {
    max_link_depth: 2,
    allowed_prefixes: [`${ns}:${copy}/`],
    required_seed_refs: [la.allowed_scope[0]],
    follow_link_classes: ['wikilink'],
    stop_conditions: [],
  };
  packet.hidden_context_audit.omitted_context_refs = [`${ns}:bench-hidden/none.md`];
  // The packet rules want the scope and prefixes quoted in the prompt: prepend them to the template's.
  packet.packet_prompt_text =
    `## Bench research scope\n` + la.allowed_scope.map((r) => `- ${r}\n`).join('') +
    `Allowed prefixes:\n- ${ns}:${copy}/\n\n` + packet.packet_prompt_text;
  const packetPath = join(workDir, 'bench-proxy.packet.json');
  await writeFile(packetPath, JSON.stringify(packet, null, 2));
  return { packetPath, scopeNotes: la.allowed_scope.length };
}
