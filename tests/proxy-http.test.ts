/**
 * The HTTP transport on an ephemeral loopback port: the same research session as MCP, 50
 * concurrent clients on one session, Host/Origin/token/size checks, and — with the built CLI — the
 * `listening on` line and a SIGKILL in the middle of a session.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acceptedHostNames, startHttpServer, parseHostPort, isLoopbackHost } from '../src/server/http.js';
import type { HttpServerHandle } from '../src/server/http.js';
import type { ProxySession } from '../src/proxy/session.js';
import type { LedgerRecord } from '../src/receipts/ledger.js';
import { verifyLedger } from '../src/receipts/ledger.js';
import { BIN, FIXTURE_VAULT, PROXY_PACKET, R, fixtureSession, readLedger, tempDir } from './helpers/proxy.js';
import { FIXTURES, REPO } from './helpers/shared.js';
import { main } from '../src/cli/main.js';

let tmp: { dir: string; cleanup: () => void };
let session: ProxySession | null = null;
let http: HttpServerHandle | null = null;
let child: ChildProcess | null = null;
beforeEach(() => {
  tmp = tempDir('loretrace-http-');
});
afterEach(async () => {
  if (http) await http.close();
  if (session) await session.close();
  if (child && child.exitCode === null) child.kill('SIGKILL');
  http = null;
  session = null;
  child = null;
  tmp.cleanup();
});

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** One HTTP request on loopback with full control of the headers. */
function send(url: string, method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}): Promise<Reply> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method, path, headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers }, agent: false }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (data += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: data === '' ? null : JSON.parse(data) }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const tool = (url: string, name: string, args: unknown, headers: Record<string, string> = {}) => send(url, 'POST', `/tools/${name}`, JSON.stringify(args), headers);

async function serve(limits = {}, options: Parameters<typeof startHttpServer>[1] = {}) {
  session = await fixtureSession({ ledgerPath: join(tmp.dir, 'http.jsonl'), limits });
  http = await startHttpServer(session, options);
  return http.url;
}

describe('lore_read of a note over max_file_bytes', () => {
  it('is refused not_found, the code of every unreadable note (docs/PROXY.md), for lore_read and lore_follow alike', async () => {
    // lore-fixtures/BigNoteLore lowers the cap to 1024 bytes; Harbor/Tide Ledger.md (3246 bytes) is over it.
    // The section-hiding packet, its refs (in lore_access and the prompt text alike) moved to this vault.
    const packet = readFileSync(join(FIXTURES, 'packets', 'section-hiding.research.packet.json'), 'utf8')
      .replaceAll('SectionLore:Harbor/Tide Office.md', 'BigNoteLore:Harbor/Quay.md').replaceAll('SectionLore:Harbor/Quay Ledger.md', 'BigNoteLore:Harbor/Quay.md')
      .replaceAll('SectionLore:', 'BigNoteLore:');
    const packetPath = join(tmp.dir, 'big.packet.json');
    writeFileSync(packetPath, packet);
    const ledgerPath = join(tmp.dir, 'big.jsonl');
    session = await fixtureSession({ ledgerPath, lore: join(FIXTURES, 'BigNoteLore'), packetPath });
    http = await startHttpServer(session, {});
    expect((await tool(http.url, 'lore_read', { ref: 'BigNoteLore:Harbor/Quay.md' })).status).toBe(200);
    for (const ref of ['BigNoteLore:Harbor/Tide Ledger.md#L1-L5', 'BigNoteLore:Harbor/Tide Ledger.md']) {
      const r = await tool(http.url, 'lore_read', { ref });
      expect([r.status, r.body.error.code]).toEqual([404, 'not_found']);
    }
    expect(readLedger(ledgerPath).filter((r) => r.kind !== 'TOOL_CALL').slice(-2).map((r) => [r.kind, r.outcome])).toEqual(['#L1-L5', ''].map((f) => ['TOOL_REFUSED', {
      status: 'refused', code: 'not_found', reason: 'not_found', message: `ref BigNoteLore:Harbor/Tide Ledger.md${f}: no note Harbor/Tide Ledger.md in this snapshot`,
    }]));
    const follow = await tool(http.url, 'lore_follow', { from_ref: 'BigNoteLore:Harbor/Quay.md', target: 'Tide Ledger' });
    expect([follow.status, follow.body.error.code]).toEqual([404, 'not_found']);
  });
});

describe('request bodies and empty lists over HTTP', () => {
  it('refuses a JSON null body like [] or 5 (the arguments must be an object) and records it as sent; no body is {}', async () => {
    const url = await serve();
    for (const body of ['null', '[]', '5']) {
      const r = await send(url, 'POST', '/tools/research_status', body);
      expect([r.status, r.body]).toEqual([400, { error: { code: 'bad_request', message: 'research_status: argument (arguments) must be an object' } }]);
    }
    expect((await send(url, 'POST', '/tools/research_status', '')).status).toBe(200);
    const records = readLedger(join(tmp.dir, 'http.jsonl'));
    expect(records.filter((r) => r.kind === 'TOOL_CALL').map((r) => r.arguments)).toEqual([null, [], 5, {}]);
    expect(records.filter((r) => r.kind === 'TOOL_REFUSED').map((r) => r.outcome)).toEqual([null, [], 5].map(() => ({
      status: 'refused', code: 'bad_request', reason: 'invalid_arguments', message: 'research_status: argument (arguments) must be an object',
    })));
  });

  it('answers [] where docs/PROXY.md documents a list and it is empty, never null', async () => {
    const url = await serve();
    const status = await tool(url, 'research_status', {});
    expect([status.body.consulted_refs, status.body.followed_refs]).toEqual([[], []]);
    const none = await tool(url, 'lore_search', { query: 'zzqx' });
    expect([none.status, none.body.results]).toEqual([200, []]);
    const read = await tool(url, 'lore_read', { ref: `${R.territories}#Brinefall Shelf` });
    expect(read.body.data.escaped_characters).toEqual({ count: 0, kinds: [] });
    const links = await tool(url, 'lore_links', { ref: R.territories });
    expect(links.body.links.every((l: { target_classes: unknown }) => Array.isArray(l.target_classes))).toBe(true);
  });
});

describe('parseHostPort', () => {
  it('reads host:port including bracketed IPv6 and refuses anything else as a usage error', () => {
    expect(parseHostPort('127.0.0.1:0')).toEqual({ host: '127.0.0.1', port: 0 });
    expect(parseHostPort('[::1]:8080')).toEqual({ host: '::1', port: 8080 });
    expect(() => parseHostPort('127.0.0.1')).toThrow(expect.objectContaining({ code: 'usage', exitCode: 2 }));
    expect(isLoopbackHost('127.1.2.3')).toBe(true);
    expect(isLoopbackHost('0.0.0.0')).toBe(false);
  });
});

describe('startHttpServer', () => {
  it('serves the research session: results with 200, refusals with 4xx and { error: { code, message } }', async () => {
    const url = await serve();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await send(url, 'GET', '/health')).body).toEqual({ status: 'ok' });
    const read = await tool(url, 'lore_read', { ref: `${R.territories}#Brinefall Shelf` });
    expect(read.status).toBe(200);
    // The seq of the call's outcome record (its TOOL_CALL is seq 1).
    expect(read.headers['loretrace-ledger-seq']).toBe('2');
    expect(read.body.data).toMatchObject({ ref: `${R.territories}#chunk1`, line_start: 5, line_end: 8, snapshot_id: session!.index.snapshot_id });
    const follow = await tool(url, 'lore_follow', { from_ref: R.territories, target: 'Brinefall Blackout' });
    expect(follow.body.admitted).toMatchObject({ ref: R.blackout, depth: 1 });
    expect((await tool(url, 'lore_read', { ref: `${R.blackout}#Aftermath` })).body.data).toMatchObject({ line_start: 9, line_end: 13, via: 'follow' });
    expect((await tool(url, 'lore_search', { query: 'sanctuary capacity' })).body.results[0].path).toBe('World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md');
    const hidden = await tool(url, 'lore_read', { ref: R.truth });
    expect(hidden).toMatchObject({ status: 404, body: { error: { code: 'not_found', message: `no admitted note matches ${JSON.stringify(R.truth)} in this session's index` } } });
    expect((await tool(url, 'lore_read', { ref: R.veilDrive })).status).toBe(403);
    expect((await tool(url, 'lore_read', { ref: 'FixtureLore:a/../b.md' })).body.error.code).toBe('bad_ref');
    expect((await tool(url, 'research_status', {})).body.followed_refs).toEqual([R.blackout]);
    expect(readLedger(join(tmp.dir, 'http.jsonl')).slice(1).map((r) => r.transport)).toEqual(Array(16).fill('http'));
  });

  it('keeps the ledger chain linear and valid under 50 concurrent clients on one session', async () => {
    const url = await serve({ rate_burst: 1000 });
    const seqs: number[] = [];
    const clients = Array.from({ length: 50 }, async (_, i) => {
      const statuses: number[] = [];
      const step = async (r: Promise<Reply>) => {
        const reply = await r;
        seqs.push(Number(reply.headers['loretrace-ledger-seq']));
        statuses.push(reply.status);
      };
      await step(tool(url, 'lore_read', { ref: `${R.territories}#chunk${i % 3}` }));
      await step(tool(url, 'lore_search', { query: `harbor ${i}` }));
      await step(tool(url, 'lore_read', { ref: R.truth }));
      await step(tool(url, 'research_status', {}));
      return statuses;
    });
    const all = await Promise.all(clients);
    // Every response names its own outcome record: 200 distinct even seqs 2..400 (each after its TOOL_CALL).
    expect([...seqs].sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => 2 * i + 2));
    expect(all.flat().filter((s) => s === 200).length).toBe(150);
    expect(all.flat().filter((s) => s === 404).length).toBe(50);
    await http!.close();
    http = null;
    await session!.close();
    session = null;
    const ledger = join(tmp.dir, 'http.jsonl');
    const report = await verifyLedger(readFileSync(ledger, 'utf8'));
    expect(report).toMatchObject({ valid: true, records: 402, closed: true, totals: { tool_calls: 200, ok: 150, refused: 50, unanswered: 0 } });
    const recs = readLedger(ledger);
    expect(recs.map((r) => r.seq)).toEqual(Array.from({ length: 402 }, (_, i) => i));
    // Calls are serialised: each outcome directly follows its TOOL_CALL.
    expect(recs.filter((r) => r.kind === 'TOOL_RESULT' || r.kind === 'TOOL_REFUSED').every((r) => r.call_record_id === recs[r.seq - 1]!.record_id && recs[r.seq - 1]!.kind === 'TOOL_CALL')).toBe(true);
  });

  it('refuses a foreign Host or Origin header, a wrong method, a non-JSON or oversized body, and records each', async () => {
    const url = await serve({ max_body_bytes: 1024 });
    const port = new URL(url).port;
    const evilHost = await tool(url, 'research_status', {}, { host: `attacker.example:${port}` });
    expect(evilHost).toMatchObject({ status: 403, body: { error: { code: 'bad_request', message: `Host header "attacker.example:${port}" is not this server's address` } } });
    expect((await tool(url, 'research_status', {}, { host: `localhost:${port}` })).status).toBe(200);
    const evilOrigin = await tool(url, 'research_status', {}, { origin: 'http://attacker.example' });
    expect(evilOrigin.status).toBe(403);
    expect((await tool(url, 'research_status', {}, { origin: `http://127.0.0.1:${port}` })).status).toBe(200);
    expect((await send(url, 'GET', '/tools/lore_read')).status).toBe(405);
    expect((await send(url, 'POST', '/tools/lore_read', 'ref=x', { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await send(url, 'POST', '/tools/lore_read', '{"ref":')).body.error).toEqual({ code: 'bad_request', message: 'the request body is not JSON: unexpected end of input at line 1, column 8' });
    const big = await tool(url, 'lore_search', { query: 'x'.repeat(1024 * 1024) });
    expect(big).toMatchObject({ status: 413, body: { error: { code: 'bad_request', message: 'the request body is larger than 1024 bytes' } } });
    expect((await send(url, 'GET', `/tools/${'a'.repeat(3000)}`)).status).toBe(414);
    const reasons = readLedger(join(tmp.dir, 'http.jsonl')).slice(1).filter((r) => r.kind !== 'TOOL_CALL').map((r) => (r.outcome!.status === 'refused' ? (r.outcome as any).reason : 'ok'));
    expect(reasons).toEqual(['bad_host', 'ok', 'bad_origin', 'ok', 'method_not_allowed', 'unsupported_media_type', 'bad_json', 'body_too_large', 'url_too_long']);
  });

  it('refuses a body with a key twice, invalid UTF-8 or another charset (400 bad_json / 415), on /tools and /mcp, and records each', async () => {
    const url = await serve();
    const twice = await send(url, 'POST', '/tools/lore_read', `{"ref":"${R.territories}","ref":"${R.truth}"}`);
    const dupMessage = 'the request body has the key "/ref" twice (at line 1, column 2 and line 1, column 55); JSON readers keep only the last value; expected each key once per object';
    expect(twice).toMatchObject({ status: 400, body: { error: { code: 'bad_request', message: dupMessage } } });
    // 0xff inside the ref string: refused, never read as "Territories\uFFFD.md".
    const notUtf8 = await send(url, 'POST', '/tools/lore_read', Buffer.concat([Buffer.from('{"ref":"FixtureLore:World/Pre-Elysium/Territories'), Buffer.from([0xff]), Buffer.from('.md"}')]));
    expect(notUtf8).toMatchObject({ status: 400, body: { error: { code: 'bad_request', message: 'the request body is not UTF-8: invalid byte 0xff at byte offset 49' } } });
    const latin1 = await send(url, 'POST', '/tools/lore_read', `{"ref":"${R.territories}"}`, { 'content-type': 'application/json; charset=latin1' });
    expect(latin1).toMatchObject({ status: 415, body: { error: { code: 'bad_request', message: 'the body must be UTF-8 JSON (got charset "latin1")' } } });
    const mcp = await send(url, 'POST', '/mcp', '{"jsonrpc":"2.0","id":1,"id":2,"method":"initialize","params":{}}', { accept: 'application/json, text/event-stream' });
    expect(mcp).toMatchObject({ status: 400, body: { jsonrpc: '2.0', id: null, error: { code: -32000, data: { code: 'bad_request', message: 'the request body has the key "/id" twice (at line 1, column 18 and line 1, column 25); JSON readers keep only the last value; expected each key once per object' } } } });
    const ok = await send(url, 'POST', '/tools/lore_read', `{"ref":"${R.territories}#chunk1"}`, { 'content-type': 'application/json; charset=UTF-8' });
    expect(ok.status).toBe(200);
    // The outcome records (a TOOL_CALL record, where the ledger writes one, carries no outcome).
    const recs = readLedger(join(tmp.dir, 'http.jsonl')).slice(1).filter((r) => r.outcome !== undefined);
    expect(recs.map((r) => [r.tool, r.kind, (r.outcome as any).reason ?? null])).toEqual([
      ['lore_read', 'TOOL_REFUSED', 'bad_json'], ['lore_read', 'TOOL_REFUSED', 'bad_json'], ['lore_read', 'TOOL_REFUSED', 'unsupported_media_type'],
      ['mcp', 'TOOL_REFUSED', 'bad_json'], ['lore_read', 'TOOL_RESULT', null],
    ]);
    expect((recs[0]!.outcome as any).message).toBe(dupMessage);
  });

  it('refuses arguments nested 8,000 levels deep with 400 bad_request, records one bounded TOOL_REFUSED and keeps serving', async () => {
    const url = await serve();
    const deep = await send(url, 'POST', '/tools/lore_read', `{"ref":${'['.repeat(8000)}${']'.repeat(8000)}}`);
    expect(deep).toMatchObject({ status: 400, body: { error: { code: 'bad_request', message: 'lore_read: arguments are nested deeper than 8 levels' } } });
    const [call, last] = readLedger(join(tmp.dir, 'http.jsonl')).slice(-2) as [LedgerRecord, LedgerRecord];
    expect(last).toMatchObject({ kind: 'TOOL_REFUSED', tool: 'lore_read', transport: 'http', call_record_id: call.record_id, outcome: { status: 'refused', code: 'bad_request', reason: 'arguments_too_deep' } });
    expect(call).toMatchObject({ kind: 'TOOL_CALL', tool: 'lore_read', transport: 'http' });
    expect(call.arguments).toEqual({ ref: [[[[[{ $omitted: 'nested', kind: 'array' }]]]]] });
    expect((await tool(url, 'research_status', {})).status).toBe(200);
  });

  it('requires a bearer token when one is set, and refuses a non-loopback bind without --allow-remote and a token', async () => {
    const token = 'a-test-token-of-32-characters-xx';
    const url = await serve({}, { token });
    expect((await tool(url, 'research_status', {})).status).toBe(401);
    expect((await tool(url, 'research_status', {}, { authorization: 'Bearer wrong-token-wrong-token' })).status).toBe(401);
    expect((await tool(url, 'research_status', {}, { authorization: `Bearer ${token}` })).status).toBe(200);
    // RFC 7235: the scheme is case-insensitive.
    expect((await tool(url, 'research_status', {}, { authorization: `bearer ${token}` })).status).toBe(200);
    expect((await tool(url, 'research_status', {}, { authorization: `BEARER ${token}` })).status).toBe(200);
    expect((await tool(url, 'research_status', {}, { authorization: `Basic ${token}` })).status).toBe(401);
    await expect(startHttpServer(session!, { host: '0.0.0.0' })).rejects.toMatchObject({ code: 'usage', exitCode: 2 });
    await expect(startHttpServer(session!, { host: '0.0.0.0', allowRemote: true })).rejects.toMatchObject({
      code: 'usage',
      message: '--allow-remote needs a bearer token (--token-file <file> or LORETRACE_PROXY_TOKEN)',
    });
  });

  it('serves a non-loopback bind with allowRemote and a token: token required, Host checked against the interfaces and allowedHosts', async () => {
    const token = 'a-remote-token-of-32-characters-';
    session = await fixtureSession({ ledgerPath: join(tmp.dir, 'http.jsonl') });
    http = await startHttpServer(session, { host: '0.0.0.0', port: 0, allowRemote: true, token, allowedHosts: ['Lore.Example.org:8443'] });
    expect(http.url).toBe(`http://0.0.0.0:${http.port}`);
    const url = `http://127.0.0.1:${http.port}`;
    const auth = { authorization: `Bearer ${token}` };
    expect((await send(url, 'GET', '/health')).body).toEqual({ status: 'ok' });
    expect((await tool(url, 'research_status', {})).status).toBe(401);
    expect((await tool(url, 'research_status', {}, { authorization: 'Bearer not-the-token-at-all-xx' })).status).toBe(401);
    expect((await tool(url, 'research_status', {}, auth)).status).toBe(200);
    expect((await tool(url, 'research_status', {}, { ...auth, host: `localhost:${http.port}` })).status).toBe(200);
    expect((await tool(url, 'research_status', {}, { ...auth, host: 'lore.example.org:8443' })).status).toBe(200);
    expect((await tool(url, 'research_status', {}, { ...auth, host: `attacker.example:${http.port}` })).status).toBe(403);
    expect((await tool(url, 'research_status', {}, { ...auth, origin: 'http://attacker.example' })).status).toBe(403);
    const reasons = readLedger(join(tmp.dir, 'http.jsonl')).slice(1).filter((r) => r.kind !== 'TOOL_CALL').map((r) => (r.outcome!.status === 'refused' ? (r.outcome as any).reason : 'ok'));
    expect(reasons).toEqual(['unauthorized', 'unauthorized', 'ok', 'ok', 'ok', 'bad_host', 'bad_origin']);
  });
});

describe('acceptedHostNames', () => {
  it('accepts the loopback names on a loopback bind, only the address on a specific bind, and the interfaces on a wildcard bind', () => {
    expect(acceptedHostNames('127.0.0.1')).toEqual(['127.0.0.1', 'localhost', '::1']);
    expect(acceptedHostNames('192.0.2.7')).toEqual(['192.0.2.7']);
    const wildcard = acceptedHostNames('0.0.0.0');
    expect(wildcard).toContain('0.0.0.0');
    expect(wildcard).toContain('localhost');
    expect(wildcard).toContain('127.0.0.1');
    expect(wildcard.filter((n) => n.includes(':'))).toEqual([]);
  });
});

const built = existsSync(join(REPO, 'dist', 'cli', 'main.js'));

describe('loretrace serve (refusing to start)', () => {
  const run = async (argv: string[]) => {
    let stderr = '';
    const code = await main(argv, { stdout: () => undefined, stderr: (t) => (stderr += t), cwd: tmp.dir, env: { ...process.env } });
    return { code, stderr };
  };
  const base = () => ['serve', '--lore', FIXTURE_VAULT, '--packet', PROXY_PACKET, '--ledger', join(tmp.dir, 'never.jsonl')];

  it('needs exactly one transport', async () => {
    expect(await run(base())).toEqual({ code: 2, stderr: 'loretrace: choose exactly one transport: --mcp or --http <host:port>; see \'loretrace serve --help\' [usage]\n' });
    expect((await run([...base(), '--mcp', '--http', '127.0.0.1:0'])).code).toBe(2);
  });

  it('refuses a non-loopback address without --allow-remote and a token, before creating the ledger', async () => {
    expect(await run([...base(), '--http', '0.0.0.0:0'])).toEqual({
      code: 2,
      stderr: 'loretrace: refusing to bind 0.0.0.0: it is not a loopback address; pass --allow-remote with a bearer token to serve beyond this machine; see \'loretrace serve --help\' [usage]\n',
    });
    expect((await run([...base(), '--http', '0.0.0.0:0', '--allow-remote'])).code).toBe(2);
    expect((await run([...base(), '--http', '127.0.0.1:0', '--limit', 'max_calls=0'])).code).toBe(2);
    expect(await run([...base(), '--http', '127.0.0.1:0', '--allow-host', 'lore.example.org'])).toEqual({
      code: 2, stderr: 'loretrace: --allow-host "lore.example.org" is not name:port; see \'loretrace serve --help\' [usage]\n',
    });
    expect(await run([...base(), '--mcp', '--allow-host', 'lore.example.org:443'])).toEqual({ code: 2, stderr: 'loretrace: --allow-host applies to --http only; see \'loretrace serve --help\' [usage]\n' });
    expect(existsSync(join(tmp.dir, 'never.jsonl'))).toBe(false);
  });
});

/** Spawn `loretrace serve --http 127.0.0.1:0` and resolve with its URL once the listening line appears. */
function spawnHttp(ledger: string): Promise<{ url: string; proc: ChildProcess; stderr: () => string }> {
  const proc = spawn(process.execPath, [BIN, 'serve', '--lore', FIXTURE_VAULT, '--packet', PROXY_PACKET, '--ledger', ledger, '--http', '127.0.0.1:0'], {
    cwd: tmp.dir,
    env: { ...process.env, LORETRACE_INDEX_DIR: join(tmp.dir, 'index') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = proc;
  let err = '';
  return new Promise((resolve, reject) => {
    proc.stderr!.on('data', (d) => {
      err += String(d);
      const m = /^listening on (http:\/\/127\.0\.0\.1:\d+)$/m.exec(err);
      if (m) resolve({ url: m[1]!, proc, stderr: () => err });
    });
    proc.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
}

describe('loretrace serve --http', () => {
  it.skipIf(!built)('prints "listening on http://127.0.0.1:PORT" on stderr and leaves a verifiable ledger after SIGKILL mid-session', async () => {
    const ledger = join(tmp.dir, 'killed.jsonl');
    const { url, proc } = await spawnHttp(ledger);
    const answered: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await tool(url, 'lore_read', { ref: `${R.territories}#chunk${i % 3}` });
      answered.push(Number(r.headers['loretrace-ledger-seq']));
    }
    // A burst still in flight when the server is killed.
    const inFlight = Array.from({ length: 20 }, () =>
      tool(url, 'lore_search', { query: 'harbor' }).then((r) => answered.push(Number(r.headers['loretrace-ledger-seq'])), () => undefined));
    await new Promise((r) => setTimeout(r, 5));
    proc.kill('SIGKILL');
    await new Promise((r) => proc.once('exit', r));
    await Promise.all(inFlight);
    const report = await verifyLedger(readFileSync(ledger, 'utf8'));
    expect(report.closed).toBe(false);
    expect(report.verified_through_seq).not.toBeNull();
    // Every answered call's record is on disk and verifies (fsync before the response).
    expect(Math.max(...answered)).toBeLessThanOrEqual(report.verified_through_seq!);
    // Nothing but a torn final line may be wrong, and then everything before it verifies. A call whose
    // TOOL_CALL was on disk but whose answer was not when the kill came is the warning ledger_call_pending.
    for (const f of report.findings) expect(['ledger_not_closed', 'ledger_torn_record', 'ledger_call_pending']).toContain(f.code);
    if (!report.valid) expect(report.first_bad_seq).toBe(report.records);
  });

  it.skipIf(!built)('refuses to start for a packet of another lore_access mode and says why', async () => {
    const proc = spawn(process.execPath, [BIN, 'serve', '--lore', FIXTURE_VAULT, '--packet', join(REPO, 'lore-fixtures', 'artifacts', 'packet.harbor.json'), '--ledger', join(tmp.dir, 'x.jsonl'), '--http', '127.0.0.1:0'], {
      cwd: tmp.dir, env: { ...process.env, LORETRACE_INDEX_DIR: join(tmp.dir, 'index') }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    let err = '';
    proc.stderr!.on('data', (d) => (err += String(d)));
    const code = await new Promise((r) => proc.once('exit', r));
    expect(code).toBe(1);
    expect(err).toMatch(/^loretrace: packet .*packet\.harbor\.json is (not a valid responder packet|.*coordinator_scoped_retrieval)/);
    expect(existsSync(join(tmp.dir, 'x.jsonl'))).toBe(false);
  });
});
