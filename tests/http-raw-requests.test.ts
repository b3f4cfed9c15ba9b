/**
 * Requests node's http client cannot send (or sends only one way), written on a raw socket: an absolute-form
 * request target (RFC 9112 §3.2.2), two Authorization headers, `Content-Length` with `Transfer-Encoding:
 * chunked` (refused by node's parser), an upper-case route, two Content-Type headers, a body with a BOM; and MCP sessions past MAX_MCP_SESSIONS, which
 * close the least-recently-used idle one instead of refusing every later client.
 */
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_MCP_SESSIONS, absoluteTargetAuthority, startHttpServer } from '../src/server/http.js';
import type { HttpServerHandle } from '../src/server/http.js';
import type { ProxySession } from '../src/proxy/session.js';
import { R, fixtureSession, readLedger, tempDir } from './helpers/proxy.js';

let tmp: { dir: string; cleanup: () => void };
let session: ProxySession | null = null;
let http: HttpServerHandle | null = null;
beforeEach(() => {
  tmp = tempDir('loretrace-raw-http-');
});
afterEach(async () => {
  if (http) await http.close();
  if (session) await session.close();
  http = null;
  session = null;
  tmp.cleanup();
});

const TOKEN = 'a-bearer-token-of-24-chars';

async function serve(options: Parameters<typeof startHttpServer>[1] = {}): Promise<HttpServerHandle> {
  session = await fixtureSession({ ledgerPath: join(tmp.dir, 'raw.jsonl'), limits: { rate_burst: 1000 } });
  http = await startHttpServer(session, { host: '127.0.0.1', port: 0, ...options });
  return http;
}

/** Send `head` (lines joined by CRLF, then a blank line) and `body` as written; the status, headers and JSON body of the answer. */
function rawSend(port: number, head: string[], body = ''): Promise<{ status: number; headers: Record<string, string>; body: any }> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    s.on('data', (d) => chunks.push(d));
    s.on('error', reject);
    // Resolve on close, and write without a half-close: node drops a response still being prepared when the client ends its side first.
    s.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const at = text.indexOf('\r\n\r\n');
      const lines = text.slice(0, at).split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines.slice(1)) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      const rest = text.slice(at + 4);
      resolve({ status: Number(lines[0]!.split(' ')[1]), headers, body: rest === '' ? null : JSON.parse(rest) });
    });
    s.write(`${[...head, 'Connection: close'].join('\r\n')}\r\n\r\n${body}`);
  });
}

const READ = JSON.stringify({ ref: `${R.territories}#L1-L2` });
const post = (target: string, host: string, extra: string[] = [], body = READ) =>
  [`POST ${target} HTTP/1.1`, `Host: ${host}`, 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`, ...extra];

describe('absoluteTargetAuthority', () => {
  it('gives the authority of an absolute-form target, null for the origin and asterisk forms, "" for anything else', () => {
    expect(['/tools/lore_read', '*', 'http://evil.com/tools/x', 'http://127.0.0.1:8/x', 'HTTP://LOCALHOST:8/x', 'https://127.0.0.1:8/x', 'http://u@127.0.0.1:8/x', 'tools/x'].map(absoluteTargetAuthority))
      .toEqual([null, null, 'evil.com', '127.0.0.1:8', 'localhost:8', '', '', '']);
  });
});

describe('HTTP requests written on a raw socket', () => {
  it('refuses an absolute-form target whose authority is not this server (403 bad_host) and serves one that is', async () => {
    const { port } = await serve();
    const host = `127.0.0.1:${port}`;
    const evil = await rawSend(port, post('http://evil.com/tools/lore_read', host), READ);
    expect([evil.status, evil.body]).toEqual([403, { error: { code: 'bad_request', message: 'the request target\'s authority "evil.com" is not this server\'s address (RFC 9112 §3.2.2: it replaces the Host header)' } }]);
    const ok = await rawSend(port, post(`http://localhost:${port}/tools/lore_read`, host), READ);
    expect([ok.status, ok.body.data.line_start, ok.body.data.line_end]).toEqual([200, 1, 2]);
    const records = readLedger(join(tmp.dir, 'raw.jsonl'));
    expect(records.map((r) => (r.outcome as any)?.reason).filter((x) => x !== undefined)).toEqual(['bad_host']);
  });

  it('refuses two Authorization headers with 400 and a JSON body, the right token first or not', async () => {
    const { port } = await serve({ token: TOKEN });
    const host = `127.0.0.1:${port}`;
    const two = await rawSend(port, post('/tools/lore_read', host, [`Authorization: Bearer ${TOKEN}`, 'Authorization: Bearer wrong-token-wrong-token']), READ);
    expect([two.status, two.headers['content-type'], two.body]).toEqual([400, 'application/json; charset=utf-8', { error: { code: 'bad_request', message: 'the request has more than one Authorization header; send one' } }]);
    const one = await rawSend(port, post('/tools/lore_read', host, [`Authorization: Bearer ${TOKEN}`]), READ);
    expect(one.status).toBe(200);
  });

  it('refuses two Content-Type headers with 400 duplicate_content_type and records the refusal', async () => {
    const { port } = await serve();
    const host = `127.0.0.1:${port}`;
    const two = await rawSend(port, post('/tools/lore_read', host, ['Content-Type: text/plain']), READ);
    expect([two.status, two.body]).toEqual([400, { error: { code: 'bad_request', message: 'the request has more than one Content-Type header; send one' } }]);
    const mcp = await rawSend(port, post('/mcp', host, ['content-type: application/json']), READ);
    expect([mcp.status, mcp.body.error.data]).toEqual([400, { code: 'bad_request', message: 'the request has more than one Content-Type header; send one' }]);
    const records = readLedger(join(tmp.dir, 'raw.jsonl'));
    expect(records.filter((r) => r.kind === 'TOOL_REFUSED').map((r) => [r.tool, (r.outcome as any).reason])).toEqual([['lore_read', 'duplicate_content_type'], ['mcp', 'duplicate_content_type']]);
  });

  it('reads a body that starts with a UTF-8 byte-order mark as the JSON after it, as every JSON input is read (RFC 8259 §8.1)', async () => {
    const { port } = await serve();
    const body = `\uFEFF${READ}`;
    const r = await rawSend(port, post('/tools/lore_read', `127.0.0.1:${port}`, [], body), body);
    expect([r.status, r.body.data.ref, r.body.data.line_start, r.body.data.line_end]).toEqual([200, `${R.territories}#L1-L2`, 1, 2]);
  });

  it('answers Content-Length with Transfer-Encoding: chunked (refused by node\'s parser) with a JSON 400 body', async () => {
    const { port } = await serve();
    const r = await rawSend(port, ['POST /tools/lore_read HTTP/1.1', `Host: 127.0.0.1:${port}`, 'Content-Type: application/json', 'Content-Length: 3', 'Transfer-Encoding: chunked'], '0\r\n\r\n');
    expect([r.status, r.headers['content-type'], r.body]).toEqual([400, 'application/json; charset=utf-8', { error: { code: 'bad_request', message: "the request is not valid HTTP/1.1 (HPE_INVALID_TRANSFER_ENCODING: Transfer-Encoding can't be present with Content-Length)" } }]);
  });

  it('gives POST /TOOLS/lore_read the 404 that names the path it was given', async () => {
    const { port } = await serve();
    const r = await rawSend(port, post('/TOOLS/lore_read', `127.0.0.1:${port}`), READ);
    expect([r.status, r.body]).toEqual([404, { error: { code: 'bad_request', message: 'no route POST /TOOLS/lore_read; use POST /tools/<tool name>, the MCP endpoint /mcp or GET /health' } }]);
  });
});

describe('MCP sessions past MAX_MCP_SESSIONS', () => {
  const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
  const LIST = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  const mcp = (port: number, body: string, id?: string) =>
    rawSend(port, ['POST /mcp HTTP/1.1', `Host: 127.0.0.1:${port}`, 'Content-Type: application/json', 'Accept: application/json, text/event-stream', `Content-Length: ${Buffer.byteLength(body)}`,
      ...(id ? [`Mcp-Session-Id: ${id}`, 'Mcp-Protocol-Version: 2025-06-18'] : [])], body);

  it('closes the least-recently-used idle session for a new initialize, so later clients are never locked out', async () => {
    const { port } = await serve();
    const ids: string[] = [];
    for (let i = 0; i < MAX_MCP_SESSIONS; i++) ids.push((await mcp(port, INIT)).headers['mcp-session-id']!);
    expect([MAX_MCP_SESSIONS, http!.mcpSessions()]).toEqual([64, 64]);
    // Session 0 is used again, so session 1 is now the least recently used.
    expect((await mcp(port, LIST, ids[0])).status).toBe(200);
    const late = await mcp(port, INIT);
    expect([late.status, http!.mcpSessions()]).toEqual([200, 64]);
    expect((await mcp(port, LIST, ids[1])).status).toBe(404);
    expect((await mcp(port, LIST, ids[0])).status).toBe(200);
    expect((await mcp(port, LIST, late.headers['mcp-session-id'])).status).toBe(200);
    for (let i = 0; i < 6; i++) expect((await mcp(port, INIT)).status).toBe(200);
    expect(http!.mcpSessions()).toBe(64);
    expect((await mcp(port, LIST, ids[2])).status).toBe(404);
  });
});
