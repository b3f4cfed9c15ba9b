/**
 * MCP over Streamable HTTP at /mcp, driven end to end by the SDK's own client
 * (`StreamableHTTPClientTransport`): tools, a refused call, resources (list and read), a session close
 * (DELETE), a second client on the same server sharing the one research session and ledger, and the same
 * Host/Origin/token checks as the REST routes — every request in the ledger.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startHttpServer } from '../src/server/http.js';
import type { HttpServerHandle } from '../src/server/http.js';
import { loreResourceUri, refOfLoreUri } from '../src/server/mcp.js';
import type { ProxySession } from '../src/proxy/session.js';
import { LORE_DATA_NOTICE } from '../src/proxy/tools.js';
import { verifyLedger } from '../src/receipts/ledger.js';
import { canonicalJson } from '../src/receipts/ledger-record.js';
import { sha256Hex } from '../src/vault/hash.js';
import { FIXTURE_VAULT, R, fixtureSession, outcomes, readLedger, tempDir } from './helpers/proxy.js';

let tmp: { dir: string; cleanup: () => void };
let session: ProxySession | null = null;
let http: HttpServerHandle | null = null;
const clients: Client[] = [];
beforeEach(() => {
  tmp = tempDir('loretrace-mcp-http-');
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  if (http) await http.close();
  if (session) await session.close();
  http = null;
  session = null;
  tmp.cleanup();
});

type CallResult = { isError?: boolean; structuredContent?: Record<string, any>; content: { type: string; text?: string }[]; _meta?: Record<string, any> };

const ledgerPath = () => join(tmp.dir, 'session.jsonl');

async function serve(options: { token?: string } = {}): Promise<HttpServerHandle> {
  session = await fixtureSession({ ledgerPath: ledgerPath() });
  http = await startHttpServer(session, { host: '127.0.0.1', port: 0, ...options });
  return http;
}

async function connect(url: string, headers: Record<string, string> = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } });
  const client = new Client({ name: 'loretrace-test', version: '0.0.0' });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

/** A raw request to the server, for what the SDK client never sends (a bad Host, a stale session id). */
function raw(url: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: any }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method, path, headers, agent: false }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (data += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data === '' ? null : JSON.parse(data) }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** Lines a..b (1-based, inclusive) of a fixture note, joined by LF (the fixtures use LF). */
function fixtureLines(path: string, a: number, b: number): string {
  return readFileSync(join(FIXTURE_VAULT, path), 'utf8').split('\n').slice(a - 1, b).join('\n');
}

/**
 * Start the proxy (`serve`) and open one MCP session over raw HTTP: its URL and the headers a follow-up request of
 * that session needs (Host, `mcp-session-id`, protocol version).
 */
async function initializedSession(): Promise<{ url: string; headers: Record<string, string> }> {
  const { url } = await serve();
  const host = new URL(url).host;
  const init = await new Promise<string>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: new URL(url).port, method: 'POST', path: '/mcp', headers: { ...MCP_HEADERS, host }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(String(res.headers['mcp-session-id'])));
    });
    req.on('error', reject);
    req.end(INIT);
  });
  return { url, headers: { ...MCP_HEADERS, host, 'mcp-session-id': init, 'mcp-protocol-version': '2025-06-18' } };
}

describe('loreResourceUri / refOfLoreUri', () => {
  it('write the namespace as the authority and percent-encode each segment, and read back the same ref', () => {
    expect(loreResourceUri('FixtureLore', 'World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md')).toBe('lore://FixtureLore/World/Pre-Elysium/Timeline/Events/Brinefall%20Blackout.md');
    expect(refOfLoreUri('lore://FixtureLore/World/Pre-Elysium/Timeline/Events/Brinefall%20Blackout.md')).toBe(R.blackout);
    expect(refOfLoreUri('lore://FixtureLore/World/Pre-Elysium/Territories.md#Brinefall%20Shelf')).toBe(`${R.territories}#Brinefall Shelf`);
    expect(refOfLoreUri('lore://FixtureLore/World/%E0%A4%A.md')).toBeNull();
    expect(refOfLoreUri('file:///etc/passwd')).toBeNull();
    expect(refOfLoreUri('lore://FixtureLore')).toBeNull();
  });

  it('refuse a %2F or %5C inside one segment instead of decoding it into a path separator', () => {
    expect(refOfLoreUri('lore://FixtureLore/World%2FPre-Elysium%2FTerritories.md')).toBeNull();
    expect(refOfLoreUri('lore://FixtureLore/World/Pre-Elysium%2fTerritories.md')).toBeNull();
    expect(refOfLoreUri('lore://FixtureLore/World%5CPre-Elysium/Territories.md')).toBeNull();
    expect(refOfLoreUri('lore://Fixture%2FLore/World/Pre-Elysium/Territories.md')).toBeNull();
    expect(refOfLoreUri('lore://FixtureLore%3AWorld/Pre-Elysium/Territories.md')).toBeNull();
    // The same note, one segment per path segment, reads back as its ref.
    expect(refOfLoreUri('lore://FixtureLore/World/Pre-Elysium/Territories.md')).toBe(R.territories);
  });
});

describe('MCP over Streamable HTTP (/mcp)', () => {
  it('serves the five tools to the SDK client, refuses a hidden note as a tool result, and records both', async () => {
    const { url } = await serve();
    const { client, transport } = await connect(url);
    expect(transport.sessionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, resources: {} });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['lore_search', 'lore_read', 'lore_links', 'lore_follow', 'research_status']);
    expect(tools[0]!.inputSchema.properties).toMatchObject({ k: { type: 'integer', minimum: 1, maximum: 20 } });

    const read = (await client.callTool({ name: 'lore_read', arguments: { ref: `${R.territories}#Brinefall Shelf` } })) as CallResult;
    expect(read.isError).toBeUndefined();
    expect(read.structuredContent!.data).toMatchObject({ ref: `${R.territories}#chunk1`, line_start: 5, line_end: 8, via: 'seed', depth: 0, content: fixtureLines('World/Pre-Elysium/Territories.md', 5, 8) });
    expect(read._meta).toEqual({ 'loretrace/ledger_seq': 2 });

    const hidden = (await client.callTool({ name: 'lore_read', arguments: { ref: R.truth } })) as CallResult;
    expect(hidden.isError).toBe(true);
    expect(hidden._meta).toEqual({
      'loretrace/refusal': { code: 'not_found', message: `no admitted note matches ${JSON.stringify(R.truth)} in this session's index` },
      'loretrace/ledger_seq': 4,
    });
    const records = readLedger(ledgerPath());
    expect(outcomes(records).map((r) => [r.seq, r.tool, r.transport, (r.outcome as any).status, (r.outcome as any).reason ?? null])).toEqual([
      [2, 'lore_read', 'mcp', 'ok', null],
      [4, 'lore_read', 'mcp', 'refused', 'hidden_ref'],
    ]);
  });

  it('lists the admitted notes as lore:// resources and reads one as a recorded lore_read; a hidden one is MCP\'s resource-not-found', async () => {
    const { url } = await serve();
    const { client } = await connect(url);
    const { resources } = await client.listResources();
    expect(resources.map((r) => [r.uri, r.name, r.title, r.mimeType, r.description])).toEqual([
      ['lore://FixtureLore/World/Pre-Elysium/Factions/index.md', 'FixtureLore:World/Pre-Elysium/Factions/index.md', 'index', 'text/markdown', 'seed note of the packet, link depth 0'],
      ['lore://FixtureLore/World/Pre-Elysium/Territories.md', 'FixtureLore:World/Pre-Elysium/Territories.md', 'Territories', 'text/markdown', 'seed note of the packet, link depth 0'],
      ['lore://FixtureLore/World/Pre-Elysium/index.md', 'FixtureLore:World/Pre-Elysium/index.md', 'index', 'text/markdown', 'scope note of the packet, link depth 0'],
    ]);
    const { contents } = await client.readResource({ uri: 'lore://FixtureLore/World/Pre-Elysium/Territories.md' });
    const territories = readFileSync(join(FIXTURE_VAULT, 'World/Pre-Elysium/Territories.md'), 'utf8');
    expect(contents).toHaveLength(1);
    expect(contents[0]).toMatchObject({ uri: 'lore://FixtureLore/World/Pre-Elysium/Territories.md', mimeType: 'text/markdown', text: territories.replace(/\n$/, '') });
    expect(contents[0]!._meta).toEqual({
      'loretrace/provenance': { ref: R.territories, path: 'World/Pre-Elysium/Territories.md', line_start: 1, line_end: territories.replace(/\n$/, '').split('\n').length, snapshot_id: session!.index.snapshot_id, via: 'seed', depth: 0 },
      'loretrace/notice': LORE_DATA_NOTICE,
      'loretrace/ledger_seq': 4,
    });
    const hidden = await client.readResource({ uri: loreResourceUri('FixtureLore', 'World/Pre-Elysium/Author Notes/Brinefall Truth.md') }).catch((e: unknown) => e);
    expect(hidden).toBeInstanceOf(McpError);
    expect((hidden as McpError).code).toBe(-32002);
    expect((hidden as McpError).data).toEqual({ code: 'not_found', message: `no admitted note matches ${JSON.stringify(R.truth)} in this session's index` });
    const encodedSlash = await client.readResource({ uri: 'lore://FixtureLore/World%2FPre-Elysium%2FTerritories.md' }).catch((e: unknown) => e);
    expect((encodedSlash as McpError).code).toBe(-32001);
    expect((encodedSlash as McpError).data).toMatchObject({ code: 'bad_ref' });
    const scheme = await client.readResource({ uri: 'file:///etc/passwd' }).catch((e: unknown) => e);
    expect((scheme as McpError).code).toBe(-32001);
    expect((scheme as McpError).data).toMatchObject({ code: 'bad_ref' });
    const notReached = await client.readResource({ uri: loreResourceUri('FixtureLore', 'World/Pre-Elysium/Factions/Movements/Quiet Hands.md') }).catch((e: unknown) => e);
    expect((notReached as McpError).data).toMatchObject({ code: 'not_reached' });
    // A followed note becomes a resource too, one link hop deep.
    await client.callTool({ name: 'lore_follow', arguments: { from_ref: R.territories, target: 'Brinefall Blackout' } });
    const after = await client.listResources();
    expect(after.resources.map((r) => [r.name, r.description])).toContainEqual([R.blackout, 'followed note, link depth 1']);
    const records = readLedger(ledgerPath());
    expect(outcomes(records).map((r) => [r.tool, r.transport, (r.arguments as any).ref ?? null, (r.outcome as any).status, (r.outcome as any).reason ?? null])).toEqual([
      ['research_status', 'mcp', null, 'ok', null],
      ['lore_read', 'mcp', R.territories, 'ok', null],
      ['lore_read', 'mcp', R.truth, 'refused', 'hidden_ref'],
      ['lore_read', 'mcp', 'lore://FixtureLore/World%2FPre-Elysium%2FTerritories.md', 'refused', 'bad_ref'],
      ['lore_read', 'mcp', 'file:///etc/passwd', 'refused', 'bad_ref'],
      ['lore_read', 'mcp', R.quietHands, 'refused', 'not_reached'],
      ['lore_follow', 'mcp', null, 'ok', null],
      ['research_status', 'mcp', null, 'ok', null],
    ]);
  });

  it('gives a second client its own MCP session over the one shared research session and ledger; DELETE ends only the first', async () => {
    const { url } = await serve();
    const a = await connect(url);
    const b = await connect(url);
    expect(a.transport.sessionId).not.toBe(b.transport.sessionId);
    expect(http!.mcpSessions()).toBe(2);
    await a.client.callTool({ name: 'lore_follow', arguments: { from_ref: R.territories, target: 'Brinefall Blackout' } });
    // Admissions are the research session's: B reads what A followed.
    const read = (await b.client.callTool({ name: 'lore_read', arguments: { ref: `${R.blackout}#Aftermath` } })) as CallResult;
    expect(read.structuredContent!.data).toMatchObject({ via: 'follow', depth: 1, line_start: 9, line_end: 13 });
    const staleId = a.transport.sessionId!;
    await a.transport.terminateSession();
    expect(http!.mcpSessions()).toBe(1);
    const stale = await raw(url, 'POST', '/mcp', { ...MCP_HEADERS, host: new URL(url).host, 'mcp-session-id': staleId, 'mcp-protocol-version': '2025-06-18' },
      JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }));
    expect(stale).toEqual({ status: 404, body: { jsonrpc: '2.0', id: null, error: { code: -32000, message: `no MCP session ${JSON.stringify(staleId)} on this server; it was closed or never opened: send initialize without Mcp-Session-Id`, data: { code: 'bad_request', message: `no MCP session ${JSON.stringify(staleId)} on this server; it was closed or never opened: send initialize without Mcp-Session-Id` } } } });
    const status = (await b.client.callTool({ name: 'research_status', arguments: {} })) as CallResult;
    expect(status.structuredContent!.calls).toEqual({ total: 4, ok: 3, refused: 1 });
    await http!.close();
    http = null;
    await session!.close();
    session = null;
    const records = readLedger(ledgerPath());
    expect(records.map((r) => [r.kind, r.tool ?? null, r.transport ?? null, (r.outcome as any)?.reason ?? null])).toEqual([
      // Ledger v3 kinds (seed 004): a TOOL_CALL per call, then its outcome (TOOL_REFUSED for the refused one).
      ['SESSION_OPENED', null, null, null],
      ['TOOL_CALL', 'lore_follow', 'mcp', null],
      ['TOOL_RESULT', 'lore_follow', 'mcp', null],
      ['TOOL_CALL', 'lore_read', 'mcp', null],
      ['TOOL_RESULT', 'lore_read', 'mcp', null],
      ['TOOL_CALL', 'mcp', 'http', null],
      ['TOOL_REFUSED', 'mcp', 'http', 'unknown_mcp_session'],
      ['TOOL_CALL', 'research_status', 'mcp', null],
      ['TOOL_RESULT', 'research_status', 'mcp', null],
      ['SESSION_CLOSED', null, null, null],
    ]);
    const report = await verifyLedger(readFileSync(ledgerPath(), 'utf8'), { file: ledgerPath() });
    expect(report).toMatchObject({ valid: true, records: 10, closed: true });
  });

  it('answers malformed tools/call, resources/read and resources/list params -32602 in one line and records each as invalid_params', async () => {
    const { url, headers } = await initializedSession();
    const cases: [unknown, string][] = [
      [{ method: 'resources/read', params: { uri: 5 } }, 'invalid params: resources/read needs "uri", a string (the lore:// URI of the note to read), not a number'],
      [{ method: 'resources/read', params: {} }, 'invalid params: resources/read needs "uri", a string (the lore:// URI of the note to read)'],
      [{ method: 'resources/list', params: { cursor: ['x'] } }, 'invalid params: "cursor" of resources/list must be a string, not an array'],
      [{ method: 'tools/call', params: { name: 5 } }, 'invalid params: tools/call needs "name", a string (the tool to call)'],
      [{ method: 'tools/call', params: { name: 'lore_read', arguments: 'x' } }, 'invalid params: "arguments" of tools/call must be an object, not a string'],
    ];
    for (const [i, [request, message]] of cases.entries()) {
      const answer = await raw(url, 'POST', '/mcp', headers, JSON.stringify({ jsonrpc: '2.0', id: 10 + i, ...(request as object) }));
      expect(answer).toEqual({ status: 200, body: { jsonrpc: '2.0', id: 10 + i, error: { code: -32602, message } } });
    }
    // A request refused before the MCP server: its JSON-RPC error is what the record's payload_hash covers too.
    const badHost = await raw(url, 'POST', '/mcp', { ...headers, host: 'rebind.example:80' }, INIT);
    const records = readLedger(ledgerPath());
    expect(records.filter((r) => r.kind === 'TOOL_REFUSED').map((r) => r.payload_hash)).toEqual([
      ...cases.map(([, message]) => sha256Hex(canonicalJson({ error: { code: -32602, message } }))),
      sha256Hex(canonicalJson({ error: badHost.body.error })),
    ]);
    records.splice(-2);
    expect(records.slice(1).map((r) => [r.kind, r.tool, r.transport, r.arguments ?? null, (r.outcome as any)?.reason ?? null, (r.outcome as any)?.message ?? null])).toEqual(cases.flatMap(([request, message], i) => [
      ['TOOL_CALL', (request as any).method, 'mcp', { jsonrpc: { id: 10 + i, ...(request as object) } }, null, null],
      ['TOOL_REFUSED', (request as any).method, 'mcp', null, 'invalid_params', `${message} (JSON-RPC -32602)`],
    ]));
  });

  it('answers params that are not an object (an array, a number, null) -32602 as stdio does, instead of the SDK\'s unrecorded parse error, and records each as invalid_params', async () => {
    const { url, headers } = await initializedSession();
    // The stdio framing's words for the same frames (src/server/stdio-lines.ts, tests/hostile-stdio.test.ts).
    const cases: [string, unknown, string][] = [
      ['tools/call', [], 'invalid params: "params" of "tools/call" must be an object, not an array'],
      ['resources/read', [], 'invalid params: "params" of "resources/read" must be an object, not an array'],
      ['resources/list', [], 'invalid params: "params" of "resources/list" must be an object, not an array'],
      ['tools/call', ['lore_read', { ref: R.truth }], 'invalid params: "params" of "tools/call" must be an object, not an array'],
      ['tools/list', 5, 'invalid params: "params" of "tools/list" must be an object, not a number'],
      ['resources/read', null, 'invalid params: "params" of "resources/read" must be an object, not null'],
    ];
    for (const [i, [method, params, message]] of cases.entries()) {
      const answer = await raw(url, 'POST', '/mcp', headers, JSON.stringify({ jsonrpc: '2.0', id: 20 + i, method, params }));
      expect(answer).toEqual({ status: 200, body: { jsonrpc: '2.0', id: 20 + i, error: { code: -32602, message } } });
    }
    // The session is still usable afterwards.
    const ok = await raw(url, 'POST', '/mcp', headers, JSON.stringify({ jsonrpc: '2.0', id: 40, method: 'resources/list' }));
    expect([ok.status, Array.isArray(ok.body.result.resources)]).toEqual([200, true]);
    const records = readLedger(ledgerPath());
    const refused = records.filter((r) => r.kind === 'TOOL_REFUSED');
    expect(refused.map((r) => r.payload_hash)).toEqual(cases.map(([, , message]) => sha256Hex(canonicalJson({ error: { code: -32602, message } }))));
    expect(records.slice(1, 1 + 2 * cases.length).map((r) => [r.kind, r.tool, r.transport, r.arguments ?? null, (r.outcome as any)?.reason ?? null, (r.outcome as any)?.message ?? null])).toEqual(cases.flatMap(([method, params, message], i) => [
      ['TOOL_CALL', method, 'mcp', { jsonrpc: { id: 20 + i, method, params } }, null, null],
      ['TOOL_REFUSED', method, 'mcp', null, 'invalid_params', `${message} (JSON-RPC -32602)`],
    ]));
    await http!.close();
    http = null;
    await session!.close();
    session = null;
    expect((await verifyLedger(readFileSync(ledgerPath(), 'utf8'))).valid).toBe(true);
  });

  it('applies the REST routes\' Host, Origin and token checks to /mcp, answers JSON-RPC errors and records each refusal', async () => {
    const token = 'a-token-of-32-characters-exactly';
    const { url } = await serve({ token });
    const host = new URL(url).host;
    const auth = { authorization: `Bearer ${token}` };
    const badHost = await raw(url, 'POST', '/mcp', { ...MCP_HEADERS, ...auth, host: 'rebind.example:80' }, INIT);
    expect(badHost).toEqual({ status: 403, body: { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Host header "rebind.example:80" is not this server\'s address', data: { code: 'bad_request', message: 'Host header "rebind.example:80" is not this server\'s address' } } } });
    const badOrigin = await raw(url, 'POST', '/mcp', { ...MCP_HEADERS, ...auth, host, origin: 'http://evil.example' }, INIT);
    expect(badOrigin.status).toBe(403);
    expect(badOrigin.body.error.data).toEqual({ code: 'bad_request', message: 'Origin "http://evil.example" is not allowed' });
    const noToken = await raw(url, 'POST', '/mcp', { ...MCP_HEADERS, host }, INIT);
    expect(noToken.status).toBe(401);
    expect(noToken.body.error.data).toEqual({ code: 'bad_request', message: 'a valid bearer token is required' });
    const noSession = await raw(url, 'POST', '/mcp', { ...MCP_HEADERS, ...auth, host }, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
    expect(noSession.status).toBe(400);
    expect(noSession.body.error.data).toEqual({ code: 'bad_request', message: 'no Mcp-Session-Id header: open an MCP session with an initialize request first' });
    const put = await raw(url, 'PUT', '/mcp', { ...MCP_HEADERS, ...auth, host }, INIT);
    expect(put.status).toBe(405);
    // The SDK client with the token works.
    const { client } = await connect(url, auth);
    const r = (await client.callTool({ name: 'lore_search', arguments: { query: 'berths', k: 2 } })) as CallResult;
    expect(r.structuredContent!.k).toBe(2);
    const records = readLedger(ledgerPath());
    expect(outcomes(records).map((x) => [x.tool, x.transport, (x.outcome as any).reason ?? 'ok'])).toEqual([
      ['mcp', 'http', 'bad_host'],
      ['mcp', 'http', 'bad_origin'],
      ['mcp', 'http', 'unauthorized'],
      ['mcp', 'http', 'no_mcp_session'],
      ['mcp', 'http', 'method_not_allowed'],
      ['lore_search', 'mcp', 'ok'],
    ]);
  });
});
