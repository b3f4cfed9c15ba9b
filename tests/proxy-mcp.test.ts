/**
 * The MCP transport: a real SDK client drives `loretrace serve --mcp` over stdio through a whole
 * research session on FixtureLore, then the ledger verifies and its exported fragment passes verifyTrace.
 * Needs `npm run build` (npm test builds first). The tool list is checked in-process over InMemoryTransport.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MCP_INSTRUCTIONS, createMcpServer, serveMcpStdio } from '../src/server/mcp.js';
import { TOOL_DESCRIPTIONS, TOOL_NAMES } from '../src/proxy/tools.js';
import { verifyLedger } from '../src/receipts/ledger.js';
import { exportLedger } from '../src/receipts/ledger-export.js';
import { indexVault } from '../src/indexer/build.js';
import { verifyTrace } from '../src/receipts/verify-trace.js';
import { validateDocument } from '../src/contracts/validate.js';
import { BIN, FIXTURE_VAULT, PROXY_PACKET, R, fixtureSession, outcomes, readLedger, tempDir } from './helpers/proxy.js';
import { REPO } from './helpers/shared.js';

let tmp: { dir: string; cleanup: () => void };
beforeEach(() => {
  tmp = tempDir('loretrace-mcp-');
});
afterEach(() => tmp.cleanup());

type CallResult = { isError?: boolean; structuredContent?: Record<string, any>; content: { type: string; text?: string }[]; _meta?: Record<string, any> };

describe('createMcpServer', () => {
  it('lists five read-only tools with static descriptions and input and output schemas', async () => {
    const session = await fixtureSession({ ledgerPath: join(tmp.dir, 'l.jsonl') });
    const server = createMcpServer(session);
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'test', version: '0.0.0' });
    await Promise.all([server.connect(a), client.connect(b)]);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['lore_search', 'lore_read', 'lore_links', 'lore_follow', 'research_status']);
    for (const t of tools) {
      expect(t.annotations).toEqual({ title: t.name, readOnlyHint: true, destructiveHint: false, idempotentHint: t.name !== 'research_status', openWorldHint: false });
      expect(t.outputSchema?.type).toBe('object');
      expect(t.inputSchema.type).toBe('object');
      for (const word of ['Brinefall', 'Meridian', 'Tidewater', 'FixtureLore', 'dock_warden']) expect(t.description).not.toContain(word);
    }
    expect(tools[0]!.inputSchema).toMatchObject({ properties: { query: { type: 'string', maxLength: 512 } }, required: ['query'], additionalProperties: false });
    // A malformed call reaches the session: refused as a tool result and recorded in the ledger.
    const bad = (await client.callTool({ name: 'lore_read', arguments: { ref: 7 } })) as CallResult;
    expect(bad.isError).toBe(true);
    expect(bad._meta?.['loretrace/refusal']).toMatchObject({ code: 'bad_request' });
    expect(readLedger(join(tmp.dir, 'l.jsonl'))[2]!.outcome).toMatchObject({ status: 'refused', code: 'bad_request', reason: 'invalid_arguments' });
    await client.close();
    await session.close();
  });
});

/** Lower-case words (letters and digits) of a text. */
const words = (t: string) => t.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

describe('createMcpServer descriptions', () => {
  it('advertise no note title and no four-word run of any note text of the vault (descriptions, schemas, instructions)', async () => {
    const session = await fixtureSession({ ledgerPath: join(tmp.dir, 'd.jsonl') });
    const server = createMcpServer(session);
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'test', version: '0.0.0' });
    await Promise.all([server.connect(a), client.connect(b)]);
    const { tools } = await client.listTools();
    const advertised = [client.getInstructions() ?? '', ...tools.map((t) => JSON.stringify(t))].join('\n');
    const hay = ` ${words(advertised).join(' ')} `;
    // Single-word titles that are also the tools' own vocabulary ("chunk index", "list links") are the only overlap.
    const titles = [...new Set(session.index.notes.map((n) => n.path.split('/').pop()!.replace(/\.md$/, '')))];
    expect(titles.filter((t) => hay.includes(` ${words(t).join(' ')} `)).sort()).toEqual(['Links', 'index']);
    const runs = new Set<string>();
    for (const c of session.index.chunks) {
      const w = words(c.text);
      for (let i = 0; i + 4 <= w.length; i++) {
        const run = ` ${w.slice(i, i + 4).join(' ')} `;
        if (hay.includes(run)) runs.add(run.trim());
      }
    }
    expect([...runs]).toEqual([]);
    expect(session.index.chunks.length).toBeGreaterThan(100);
    // Static: the descriptions are the fixed strings of src/proxy/tools.ts, whatever the packet or vault.
    expect(tools.map((t) => t.description)).toEqual(TOOL_NAMES.map((n) => TOOL_DESCRIPTIONS[n]));
    expect(client.getInstructions()).toBe(MCP_INSTRUCTIONS);
    await client.close();
    await session.close();
  });
});

/**
 * A client that writes its whole conversation at once and closes stdin: initialize, initialized, tools/list and
 * three tool calls (one refused). Ids 1-5 are requests; the notification has none.
 */
const PIPED = [
  { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '0' } } },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'research_status', arguments: {} } },
  { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'lore_read', arguments: { ref: `${R.territories}#Kestrel Reach` } } },
  { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'lore_read', arguments: { ref: R.veilDrive } } },
].map((m) => JSON.stringify(m) + '\n').join('');

/** Check the replies to {@link PIPED} (stdout text) and the ledger it left: every request answered, every call recorded once. */
async function expectAllPipedAnswered(stdout: string, ledgerPath: string): Promise<void> {
  const replies = stdout.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
  expect(replies.map((r) => r.id).sort()).toEqual([1, 2, 3, 4, 5]);
  const byId = new Map(replies.map((r) => [r.id, r]));
  expect(byId.get(1).result.serverInfo).toEqual({ name: 'loretrace', version: '0.1.0' });
  expect(byId.get(2).result.tools.map((t: { name: string }) => t.name)).toEqual(['lore_search', 'lore_read', 'lore_links', 'lore_follow', 'research_status']);
  expect(byId.get(3).result._meta).toEqual({ 'loretrace/ledger_seq': 2 });
  expect(byId.get(4).result.structuredContent.data).toMatchObject({ ref: `${R.territories}#chunk2`, line_start: 10, line_end: 14, via: 'seed' });
  expect(byId.get(4).result._meta).toEqual({ 'loretrace/ledger_seq': 4 });
  expect(byId.get(5).result).toMatchObject({ isError: true, _meta: { 'loretrace/refusal': { code: 'out_of_scope' }, 'loretrace/ledger_seq': 6 } });
  const report = await verifyLedger(readFileSync(ledgerPath, 'utf8'));
  expect(report).toMatchObject({ valid: true, closed: true, records: 8, totals: { tool_calls: 3, ok: 2, refused: 1, unanswered: 0 }, findings: [] });
  expect(readLedger(ledgerPath).map((r) => [r.seq, r.kind, r.tool ?? null])).toEqual([
    [0, 'SESSION_OPENED', null], [1, 'TOOL_CALL', 'research_status'], [2, 'TOOL_RESULT', 'research_status'], [3, 'TOOL_CALL', 'lore_read'], [4, 'TOOL_RESULT', 'lore_read'],
    [5, 'TOOL_CALL', 'lore_read'], [6, 'TOOL_REFUSED', 'lore_read'], [7, 'SESSION_CLOSED', null],
  ]);
}

describe('serveMcpStdio', () => {
  it('answers every request already read when stdin ends with calls in flight, before it reports closed', async () => {
    const ledger = join(tmp.dir, 'piped.jsonl');
    const session = await fixtureSession({ ledgerPath: ledger });
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (d) => (out += String(d)));
    const handle = await serveMcpStdio(session, { stdin, stdout });
    stdin.end(PIPED);
    await handle.closed;
    const answeredAtClose = out;
    await handle.close();
    await session.close();
    expect(out).toBe(answeredAtClose);
    await expectAllPipedAnswered(answeredAtClose, ledger);
  });
});

describe('loretrace serve --mcp', () => {
  it.skipIf(!existsSync(join(REPO, 'dist', 'cli', 'main.js')))('serves a whole research session over stdio; the ledger verifies and the export verifies against the vault', async () => {
    const ledger = join(tmp.dir, 'mcp.jsonl');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'serve', '--lore', FIXTURE_VAULT, '--packet', PROXY_PACKET, '--ledger', ledger, '--mcp'],
      env: { ...process.env, LORETRACE_INDEX_DIR: join(tmp.dir, 'index') } as Record<string, string>,
      cwd: tmp.dir,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d) => (stderr += String(d)));
    const client = new Client({ name: 'responder', version: '0.0.0' });
    await client.connect(transport);
    // listTools first: the SDK client then checks every structuredContent against the tool's outputSchema
    // (callTool throws on a mismatch), so each result below is schema-valid.
    expect((await client.listTools()).tools.map((t) => [t.name, t.outputSchema?.type])).toEqual(TOOL_NAMES.map((n) => [n, 'object']));
    const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallResult;

    const status = await call('research_status', {});
    expect(status.structuredContent!.admitted.map((a: any) => a.ref)).toEqual([R.factions, R.territories, R.preIndex]);
    const seed = await call('lore_read', { ref: `${R.territories}#Kestrel Reach` });
    expect(seed.structuredContent!.data).toMatchObject({ ref: `${R.territories}#chunk2`, line_start: 10, line_end: 14, via: 'seed' });
    expect(JSON.parse(seed.content[0]!.text!)).toEqual(seed.structuredContent);
    const links = await call('lore_links', { ref: R.territories });
    expect(links.structuredContent!.links.map((l: any) => l.target)).toEqual(['Meridian Compact', 'Kestrel Route Accord', 'Brinefall Blackout']);
    const follow = await call('lore_follow', { from_ref: R.territories, target: 'Kestrel Route Accord' });
    expect(follow.structuredContent!.admitted).toMatchObject({ ref: R.kestrel, depth: 1, newly_admitted: true });
    const followed = await call('lore_read', { ref: R.kestrel });
    expect(followed.structuredContent!.data).toMatchObject({ ref: `${R.kestrel}#chunk0`, line_start: 1, line_end: 7, via: 'follow', depth: 1 });
    const hits = await call('lore_search', { query: 'arbiters neutrality accord', k: 2 });
    expect(hits.structuredContent!.results[0]).toMatchObject({ path: 'World/Pre-Elysium/Timeline/Events/Kestrel Route Accord.md' });
    const refusal = await call('lore_read', { ref: R.veilDrive });
    expect(refusal.isError).toBe(true);
    expect(refusal.structuredContent).toBeUndefined();
    // "Not yours" names the ref only quoted and escaped, then the packet's allowed prefixes.
    const outOfScope = `ref "FixtureLore:World/Post-Elysium/Veil Drive.md" is not in this packet's scope (out_of_scope); allowed prefixes: FixtureLore:World/Politics/, FixtureLore:World/Pre-Elysium/, FixtureLore:World/Technology/`;
    expect(JSON.parse(refusal.content[0]!.text!)).toEqual({ error: { code: 'out_of_scope', message: outOfScope } });
    expect(refusal._meta).toEqual({ 'loretrace/refusal': { code: 'out_of_scope', message: outOfScope }, 'loretrace/ledger_seq': 14 });

    await client.close();
    for (let i = 0; i < 100 && !readFileSync(ledger, 'utf8').includes('"SESSION_CLOSED"'); i++) await new Promise((r) => setTimeout(r, 50));
    expect(stderr).toContain('loretrace: serving packet proxy-fixture.brinefall-berths.dock_warden_ilse.packet.research.v0 over MCP stdio');

    const text = readFileSync(ledger, 'utf8');
    const report = await verifyLedger(text, { index: await indexVault(FIXTURE_VAULT, { persist: false, workers: false }) });
    expect(report).toMatchObject({ valid: true, closed: true, records: 16, totals: { tool_calls: 7, ok: 6, refused: 1, unanswered: 0 } });
    expect(outcomes(readLedger(ledger)).map((r) => [r.tool, r.transport])).toEqual([
      ['research_status', 'mcp'], ['lore_read', 'mcp'], ['lore_links', 'mcp'], ['lore_follow', 'mcp'], ['lore_read', 'mcp'], ['lore_search', 'mcp'], ['lore_read', 'mcp'],
    ]);
    const fixtureIndex = await indexVault(FIXTURE_VAULT, { persist: false, workers: false });
    const fragment = await exportLedger(text, { index: fixtureIndex });
    expect(fragment.consulted_refs).toEqual([R.territories]);
    expect(fragment.followed_refs).toEqual([R.kestrel]);
    const verdict = await verifyTrace(fixtureIndex, fragment, { ledgers: [{ file: 'session.jsonl', text }] });
    // Both reads are ledger-backed and verify; the session never read the packet's second required seed
    // (World/Pre-Elysium/Factions/index.md), which seed 001 makes a failure of the research-enabled response.
    expect(verdict.runner_captured).toEqual({ checked: 2, failed: 0, ledger_backed: 2 });
    expect(verdict.totals.seed_not_consulted).toBe(1);
    expect(verdict.ok).toBe(false);
    const validation = validateDocument('capture-fragment', fragment, { file: 'fragment.json' });
    expect([validation.valid, validation.errors, validation.warnings]).toEqual([true, [], []]);
  });

  it.skipIf(!existsSync(join(REPO, 'dist', 'cli', 'main.js')))('answers every piped request when the client closes stdin at once, then closes the ledger', async () => {
    const ledger = join(tmp.dir, 'piped-bin.jsonl');
    const proc = spawn(process.execPath, [BIN, 'serve', '--lore', FIXTURE_VAULT, '--packet', PROXY_PACKET, '--ledger', ledger, '--mcp'], {
      cwd: tmp.dir,
      env: { ...process.env, LORETRACE_INDEX_DIR: join(tmp.dir, 'index') },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d) => (stdout += String(d)));
    proc.stderr.on('data', (d) => (stderr += String(d)));
    const exited = new Promise<number | null>((r) => proc.on('close', (code) => r(code)));
    proc.stdin.end(PIPED);
    expect(await exited).toBe(0);
    expect(stderr).toContain(`loretrace: session closed; ledger ${ledger}`);
    await expectAllPipedAnswered(stdout, ledger);
  });
});
