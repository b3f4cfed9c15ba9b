/**
 * HTTP transport of the research proxy (docs/PROXY.md): a thin express 5 shell over {@link ProxySession}.
 *
 * - `POST /tools/<tool name>` with the tool's arguments as a JSON body (`Content-Type: application/json`)
 *   → `200` with the tool's result, or a 4xx with `{ "error": { "code", "message" } }` for a refusal
 *   (status per code in src/proxy/refusals.ts: 400 bad_ref/bad_request, 403 out_of_scope/not_reached/
 *   depth_exceeded/class_not_allowed, 404 not_found, 429 budget_exhausted/rate_limited). Same tools and
 *   semantics as MCP: both call `session.call`.
 * - `POST|GET|DELETE /mcp`: MCP's Streamable HTTP transport (the SDK's `StreamableHTTPServerTransport`,
 *   JSON responses), one MCP session per `initialize` with its `Mcp-Session-Id`; every MCP session's server
 *   is {@link createMcpServer} over the same {@link ProxySession}, so all MCP sessions and REST calls of one
 *   server share one research session and one ledger (docs/PROXY.md, "MCP over Streamable HTTP").
 * - `GET /health` → `{ "status": "ok" }`.
 * - Binds 127.0.0.1 by default. A non-loopback bind needs `allowRemote` and a bearer token (every request
 *   then needs `Authorization: Bearer <token>`; a token may be set on loopback too).
 * - DNS-rebinding guard: the `Host` header must name the bound address with the bound port (on a loopback
 *   bind also `localhost`/`127.0.0.1`/`[::1]`; on a wildcard bind `0.0.0.0`/`::` the address of any local
 *   interface or `localhost`; see {@link acceptedHostNames}) or one of `allowedHosts`; an `Origin` header,
 *   when present, must be `http://<accepted host>`; an absolute-form target's authority must be one too
 *   (RFC 9112 §3.2.2). More than one `Authorization` header is `400` (`duplicate_authorization`), more than
 *   one `Content-Type` header likewise (`duplicate_content_type`).
 * - Size limits: request target ≤ `max_url_chars` (414), JSON body ≤ `max_body_bytes` (413, collected by
 *   express's raw body reader with that limit), headers ≤ Node's default 16 KiB. The body is read with the
 *   project's strict JSON reader: invalid UTF-8 and duplicate keys are refused `400` (reason `bad_json`).
 * - Every tool response carries the header `Loretrace-Ledger-Seq: <seq>` (its ledger record, on disk
 *   before the response is sent).
 * - Every request to `/tools/…` and `/mcp` — including those refused here before reaching a tool (bad Host,
 *   bad token, body too large, malformed JSON, wrong content type or method, unknown MCP session) — is
 *   recorded in the ledger (a refused `/mcp` request with tool `mcp`).
 */
import { timingSafeEqual, createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage, Server as NodeHttpServer, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { networkInterfaces } from 'node:os';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { LoretraceError } from '../errors.js';
import { createMcpServer } from './mcp.js';
import { readClientJson } from './strict-json.js';
import { JSONRPC_INVALID_PARAMS, requestParamsProblem } from './stdio-lines.js';
import type { ProxySession } from '../proxy/session.js';
import { REFUSAL_HTTP_STATUS } from '../proxy/refusals.js';
import type { RefusalCode } from '../proxy/refusals.js';

/** Options of {@link startHttpServer}. */
export interface HttpServerOptions {
  /** Address to bind; default `127.0.0.1`. */
  host?: string;
  /** Port; 0 (default) picks a free one. */
  port?: number;
  /** Required for a non-loopback `host`. */
  allowRemote?: boolean;
  /** Bearer token (≥ 16 characters). Required with `allowRemote`. */
  token?: string;
  /** Extra accepted `Host` header values (`name:port`, compared case-insensitively), e.g. a DNS name or a TLS proxy's name (`serve --allow-host`). */
  allowedHosts?: string[];
}

/** A running HTTP server. */
export interface HttpServerHandle {
  /** `http://host:port` (IPv6 hosts in brackets). */
  url: string;
  host: string;
  port: number;
  /** MCP sessions open on {@link MCP_HTTP_PATH} now (initialized and not yet ended). */
  mcpSessions(): number;
  /**
   * Close every MCP session, stop accepting connections and wait for open ones to finish. Does not close
   * the research session (the caller writes the ledger's `SESSION_CLOSED` record with `ProxySession.close`).
   */
  close(): Promise<void>;
}

/** True for loopback bind addresses: `localhost`, `127.0.0.0/8`, `::1`. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(h);
}

/**
 * Parse `host:port` (`127.0.0.1:0`, `[::1]:8080`, `localhost:7070`).
 * @throws LoretraceError `usage` (exit 2) for anything else.
 */
export function parseHostPort(text: string): { host: string; port: number } {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):([0-9]{1,5})$/.exec(text);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) {
    throw new LoretraceError('usage', `--http ${JSON.stringify(text)} is not host:port`, { expected: 'host:port, e.g. 127.0.0.1:0 (0 = a free port) or [::1]:8080' }, 2);
  }
  return { host: m[1] ?? m[2]!, port };
}

/** True for the wildcard bind addresses `0.0.0.0` and `::` (every interface). */
function isWildcardHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === '0.0.0.0' || h === '::' || h === '0:0:0:0:0:0:0:0';
}

/**
 * Host names (without port) a `Host` header may carry for a bind address: a loopback bind accepts the
 * address, `localhost`, `127.0.0.1` and `::1`; a wildcard bind (`0.0.0.0`, `::`) accepts the address of
 * every local network interface (from `os.networkInterfaces()`, link-local IPv6 with a zone left out) plus
 * `localhost`, since clients name the machine by one of them; any other bind accepts only its address.
 * Names such as a DNS name or a TLS proxy's are added with `allowedHosts` (`serve --allow-host`).
 */
export function acceptedHostNames(host: string): string[] {
  if (isLoopbackHost(host)) return [...new Set([host, 'localhost', '127.0.0.1', '::1'])];
  if (!isWildcardHost(host)) return [host];
  const names = new Set<string>([host.replace(/^\[|\]$/g, ''), 'localhost']);
  const ipv6 = host.includes(':');
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) {
      if (a.family === 'IPv6' && (!ipv6 || a.scopeid)) continue;
      names.add(a.address);
    }
  }
  return [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

function hostLabel(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** Path of the Streamable HTTP MCP endpoint. */
export const MCP_HTTP_PATH = '/mcp';

/** Ledger `tool` of a request to {@link MCP_HTTP_PATH} refused before it reached the MCP server. */
const MCP_LEDGER_TOOL = 'mcp';

/**
 * MCP sessions one server holds at once (each an SDK transport and server in memory). An `initialize` past
 * it closes the least-recently-used session that is not serving a request (its client then gets `404
 * unknown_mcp_session` and, as MCP says, initializes again), so no client can lock later ones out by
 * opening sessions and leaving them; only when every session is serving a request is it refused `503`.
 */
export const MAX_MCP_SESSIONS = 64;

/**
 * The ledger tool name of a request path: the decoded name of `/tools/<name>` (at most 128 characters),
 * `mcp` for `/mcp`, or null for any other path (not recorded).
 */
function toolOf(path: string): string | null {
  // Routing is case-sensitive (createHttpApp), so `/TOOLS/x` is no tool route and is recorded as none.
  if (path === MCP_HTTP_PATH) return MCP_LEDGER_TOOL;
  if (!path.startsWith('/tools/')) return null;
  const raw = path.slice('/tools/'.length);
  let name: string;
  try {
    name = decodeURIComponent(raw);
  } catch {
    name = raw;
  }
  return name.slice(0, 128);
}

/** The MCP sessions of one HTTP server: each `Mcp-Session-Id` with its SDK transport. */
interface McpSessions {
  /** Transports by session id. */
  transports: Map<string, StreamableHTTPServerTransport>;
  /** Close every MCP session (ends open SSE streams), so the HTTP server can stop. */
  closeAll(): Promise<void>;
}

/** The express app of a session plus its MCP sessions. */
interface HttpApp {
  app: express.Express;
  mcp: McpSessions;
}

/**
 * Build the express app of a session ({@link startHttpServer} is the entry). `allowedHosts` is the exact
 * set of accepted `Host` header values.
 */
function createHttpApp(session: ProxySession, config: { allowedHosts: Set<string>; token?: string }): HttpApp {
  const app = express();
  // `/TOOLS/lore_read` is not `/tools/lore_read`: express would route it case-insensitively while the ledger
  // (toolOf) and the docs name the lower-case path; it gets the 404 that names the path it was given.
  app.set('case sensitive routing', true);
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', false);
  const limits = session.limits;

  /** Refuse a request before it reaches a tool; record it when it targets a tool. */
  const refuse = async (req: Request, res: Response, status: number, code: RefusalCode, reason: string, message: string) => {
    const tool = toolOf(req.path);
    // An MCP client reads a JSON-RPC error; the refusal code travels in `data` as in every loretrace refusal.
    const mcpError = { code: -32000, message, data: { code, message } };
    if (tool !== null) {
      const summary = { $omitted: 'http_request', method: req.method, content_length: req.headers['content-length'] ?? null };
      try {
        // payload_hash: the answer's `{ error }` (a REST body is `{ error: { code, message } }`, the default).
        await session.recordTransportRefusal(tool, summary, code, reason, message, 'http', req.path === MCP_HTTP_PATH ? { error: mcpError } : undefined);
      } catch {
        res.status(503).json({ error: { code: 'unavailable', message: 'the ledger cannot be written; the session is stopped' } });
        return;
      }
    }
    if (status === 429) res.set('Retry-After', '1');
    if (req.path === MCP_HTTP_PATH) {
      res.status(status).json({ jsonrpc: '2.0', error: mcpError, id: null });
      return;
    }
    res.status(status).json({ error: { code, message } });
  };

  app.use((req: Request, res: Response, next: NextFunction) => {
    res.set('Cache-Control', 'no-store');
    res.set('X-Content-Type-Options', 'nosniff');
    if (req.originalUrl.length > limits.max_url_chars) {
      void refuse(req, res, 414, 'bad_request', 'url_too_long', `the request target is longer than ${limits.max_url_chars} characters`);
      return;
    }
    const target = absoluteTargetAuthority(req.originalUrl);
    if (target !== null && !config.allowedHosts.has(target.toLowerCase())) {
      void refuse(req, res, 403, 'bad_request', 'bad_host', `the request target's authority ${JSON.stringify(target.slice(0, 100))} is not this server's address (RFC 9112 §3.2.2: it replaces the Host header)`);
      return;
    }
    const host = req.headers.host ?? '';
    if (!config.allowedHosts.has(host.toLowerCase())) {
      void refuse(req, res, 403, 'bad_request', 'bad_host', `Host header ${JSON.stringify(host.slice(0, 100))} is not this server's address`);
      return;
    }
    if (headerCount(req.rawHeaders, 'authorization') > 1) {
      void refuse(req, res, 400, 'bad_request', 'duplicate_authorization', 'the request has more than one Authorization header; send one');
      return;
    }
    // Node keeps the first Content-Type and drops the rest, so the body would be read by a type another reader
    // of the same request (a proxy in front, a log) may take to be the second one.
    if (headerCount(req.rawHeaders, 'content-type') > 1) {
      void refuse(req, res, 400, 'bad_request', 'duplicate_content_type', 'the request has more than one Content-Type header; send one');
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined) {
      let ok = false;
      try {
        const u = new URL(origin);
        ok = u.protocol === 'http:' && config.allowedHosts.has(u.host.toLowerCase());
      } catch {
        ok = false;
      }
      if (!ok) {
        void refuse(req, res, 403, 'bad_request', 'bad_origin', `Origin ${JSON.stringify(origin.slice(0, 100))} is not allowed`);
        return;
      }
    }
    if (config.token !== undefined && req.path !== '/health') {
      const auth = req.headers.authorization ?? '';
      // RFC 7235 §2.1: the auth scheme is case-insensitive (`bearer`, `BEARER` are `Bearer`).
      const m = /^Bearer +(.+)$/i.exec(auth);
      if (!m || !sameSecret(m[1]!, config.token)) {
        res.set('WWW-Authenticate', 'Bearer');
        void refuse(req, res, 401, 'bad_request', 'unauthorized', 'a valid bearer token is required');
        return;
      }
    }
    next();
  });

  app.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });

  app.all('/tools/{*name}', (req, res, next) => {
    if (req.method !== 'POST') {
      res.set('Allow', 'POST');
      void refuse(req, res, 405, 'bad_request', 'method_not_allowed', `${req.method} is not allowed on /tools/…; use POST with a JSON body`);
      return;
    }
    if (!req.is('application/json')) {
      void refuse(req, res, 415, 'bad_request', 'unsupported_media_type', 'the body must be JSON (Content-Type: application/json)');
      return;
    }
    next();
  });

  app.post('/tools/{*name}', ...strictJsonBody(limits.max_body_bytes, refuse), async (req, res) => {
    const tool = toolOf(req.path) ?? '';
    try {
      // No body is `{}` (strictJsonBody); a JSON `null` is a body like `[]` or `5`, refused by the tool's schema.
      const r = await session.call(tool, req.body === undefined ? {} : req.body, 'http');
      res.set('Loretrace-Ledger-Seq', String(r.seq));
      if (r.ok) {
        res.status(200).json(r.result);
        return;
      }
      if (REFUSAL_HTTP_STATUS[r.refusal.code] === 429) res.set('Retry-After', '1');
      res.status(REFUSAL_HTTP_STATUS[r.refusal.code]).json({ error: r.refusal });
    } catch {
      res.status(503).json({ error: { code: 'unavailable', message: 'the session is closed or its ledger cannot be written' } });
    }
  });

  const mcp = mountMcp(app, session, refuse);

  app.use((req: Request, res: Response) => {
    res.status(404).json({ error: { code: 'bad_request', message: `no route ${req.method} ${req.path.slice(0, 100)}; use POST /tools/<tool name>, the MCP endpoint ${MCP_HTTP_PATH} or GET /health` } });
  });

  // Body-reader failures (too large, bad encoding) and anything else thrown; bad JSON is refused by strictJsonBody.
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const e = err as { type?: string; status?: number; message?: string };
    if (e.type === 'entity.too.large') {
      void refuse(req, res, 413, 'bad_request', 'body_too_large', `the request body is larger than ${limits.max_body_bytes} bytes`);
    } else if (e.type === 'entity.parse.failed') {
      void refuse(req, res, 400, 'bad_request', 'bad_json', 'the request body is not JSON');
    } else if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
      void refuse(req, res, e.status, 'bad_request', e.type ?? 'bad_body', 'the request body cannot be read');
    } else {
      res.status(500).json({ error: { code: 'internal', message: 'internal error' } });
    }
  });
  return { app, mcp };
}

/**
 * The authority (`host:port`, as written) of an absolute-form request target (`POST http://h:p/tools/x`),
 * or null for the origin form (`/tools/x`) and the asterisk form. RFC 9112 §3.2.2: a server that receives
 * the absolute form must ignore `Host` and use the target's authority, so that authority is checked like a
 * `Host` header; a target that is neither form, or an absolute form that does not parse, gives `""` (refused).
 */
export function absoluteTargetAuthority(url: string): string | null {
  if (url.startsWith('/') || url === '*') return null;
  try {
    const u = new URL(url);
    return u.protocol === 'http:' && u.username === '' && u.password === '' ? u.host : '';
  } catch {
    return '';
  }
}

/** How many times a header occurs in node's `rawHeaders` (name, value, name, value, …; names compared case-insensitively). */
function headerCount(rawHeaders: readonly string[], name: string): number {
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === name) n += 1;
  return n;
}

/** How {@link mountMcp} refuses a request before the MCP server sees it (recorded, see `refuse` above). */
type Refuser = (req: Request, res: Response, status: number, code: RefusalCode, reason: string, message: string) => Promise<void>;

/** The `charset` parameter of a Content-Type header, lower-cased, or null when it has none. */
function charsetOf(contentType: string | undefined): string | null {
  const m = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '');
  return m ? m[1]!.toLowerCase() : null;
}

/**
 * The JSON body of a `/tools/…` or `/mcp` request, read strictly: express's raw reader collects the bytes (at
 * most `maxBytes`: `413` beyond, as before), then {@link readClientJson} decodes them — the project's strict
 * JSON reader, so invalid UTF-8 is refused instead of turned into U+FFFD and a key repeated in one object is
 * refused instead of silently keeping the last value (`400`, ledger reason `bad_json`, the message naming the
 * byte offset, the line and column, or the repeated key's pointer). A charset other than UTF-8 is `415`
 * (RFC 8259 §8.1: JSON exchanged between systems is UTF-8). An empty body is `{}` and a request without a
 * body (a GET) keeps `req.body` undefined, as express's JSON reader did.
 */
function strictJsonBody(maxBytes: number, refuse: Refuser): express.RequestHandler[] {
  const collect = express.raw({ limit: maxBytes, type: 'application/json' });
  const decode: express.RequestHandler = (req, res, next) => {
    if (!Buffer.isBuffer(req.body)) {
      req.body = undefined;
      next();
      return;
    }
    const charset = charsetOf(req.headers['content-type']);
    if (charset !== null && charset !== 'utf-8' && charset !== 'utf8') {
      void refuse(req, res, 415, 'bad_request', 'unsupported_media_type', `the body must be UTF-8 JSON (got charset ${JSON.stringify(charset.slice(0, 40))})`);
      return;
    }
    if (req.body.length === 0) {
      req.body = {};
      next();
      return;
    }
    const read = readClientJson(req.body, 'the request body');
    if (!read.ok) {
      void refuse(req, res, 400, 'bad_request', 'bad_json', read.message);
      return;
    }
    req.body = read.value;
    next();
  };
  return [collect, decode];
}

/**
 * Mount MCP's Streamable HTTP transport at {@link MCP_HTTP_PATH} (the pattern of the SDK's own examples):
 * a `POST` of a request whose `params` are not an object (or nest too deep) is answered `-32602` and recorded
 * (tool = the method, reason `invalid_params`: `requestParamsProblem`, the stdio framing's check) before the SDK's
 * transport parses it — the SDK would answer it `-32700` and nothing would reach the ledger;
 * a `POST` without `Mcp-Session-Id` that is an `initialize` request opens an MCP session — a new SDK
 * `StreamableHTTPServerTransport` (session id = a random UUID, JSON responses) connected to a new
 * {@link createMcpServer} over the one `session`; a request with a known id goes to its transport (`POST`
 * messages, `GET` the server's SSE stream, `DELETE` ends the MCP session, not the research session);
 * anything else is refused and recorded: no id on a non-initialize request `400`, an unknown id `404` (the
 * session was closed or never existed; MCP says the client then starts a new one), a method other than
 * those three `405`, a body that is not JSON `415`; an `initialize` with {@link MAX_MCP_SESSIONS} sessions open
 * closes the least-recently-used idle one, and is `503` only when all of them are serving a request.
 * The Host/Origin/token checks and the size limits ran before (the app's first middleware).
 */
function mountMcp(app: express.Express, session: ProxySession, refuse: Refuser): McpSessions {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const use = new McpSessionUse();
  const limits = session.limits;

  app.all(MCP_HTTP_PATH, (req, res, next) => {
    if (req.method !== 'POST' && req.method !== 'GET' && req.method !== 'DELETE') {
      res.set('Allow', 'GET, POST, DELETE');
      void refuse(req, res, 405, 'bad_request', 'method_not_allowed', `${req.method} is not allowed on ${MCP_HTTP_PATH}; MCP's Streamable HTTP uses POST, GET and DELETE`);
      return;
    }
    if (req.method === 'POST' && !req.is('application/json')) {
      void refuse(req, res, 415, 'bad_request', 'unsupported_media_type', 'the body must be JSON-RPC (Content-Type: application/json)');
      return;
    }
    next();
  });

  app.all(MCP_HTTP_PATH, ...strictJsonBody(limits.max_body_bytes, refuse), async (req, res) => {
    const id = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(id) ? id[0] : id;
    let transport = sessionId === undefined ? undefined : transports.get(sessionId);
    if (sessionId !== undefined && transport === undefined) {
      await refuse(req, res, 404, 'bad_request', 'unknown_mcp_session', `no MCP session ${JSON.stringify(sessionId.slice(0, 100))} on this server; it was closed or never opened: send initialize without Mcp-Session-Id`);
      return;
    }
    if (transport === undefined) {
      if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
        await refuse(req, res, 400, 'bad_request', 'no_mcp_session', 'no Mcp-Session-Id header: open an MCP session with an initialize request first');
        return;
      }
      if (transports.size >= MAX_MCP_SESSIONS) {
        const idle = use.leastRecentlyUsedIdle(transports.keys());
        if (idle === null) {
          await refuse(req, res, 503, 'bad_request', 'too_many_mcp_sessions', `this server holds ${MAX_MCP_SESSIONS} MCP sessions, each serving a request; retry when one has answered`);
          return;
        }
        const evicted = transports.get(idle)!;
        transports.delete(idle);
        use.forget(idle);
        await evicted.close();
      }
      transport = await openMcpSession(session, transports, use);
    }
    // A request whose params no method takes (an array, a number, null, too deep) is answered -32602 and recorded
    // here, as the stdio framing does; the SDK would answer it with an unrecorded -32700 parse error.
    const bad = req.method === 'POST' ? requestParamsProblem(req.body) : null;
    if (bad !== null) {
      const error = { code: JSONRPC_INVALID_PARAMS, message: bad.message };
      try {
        await session.recordTransportRefusal(bad.method, { jsonrpc: { id: bad.id, method: bad.method, params: bad.params ?? null } }, 'bad_request', 'invalid_params', `${bad.message} (JSON-RPC ${JSONRPC_INVALID_PARAMS})`, 'mcp', { error });
      } catch {
        res.status(503).json({ jsonrpc: '2.0', error: { code: -32000, message: 'the ledger cannot be written; the session is stopped' }, id: bad.id });
        return;
      }
      res.status(200).json({ jsonrpc: '2.0', id: bad.id, error });
      return;
    }
    const active = transport.sessionId;
    if (active !== undefined) use.begin(active, res);
    await transport.handleRequest(req as IncomingMessage, res as ServerResponse, req.body);
  });

  return {
    transports,
    closeAll: async () => {
      const open = [...transports.values()];
      transports.clear();
      await Promise.all(open.map((t) => t.close()));
    },
  };
}

/**
 * When each MCP session was last used and how many of its requests are being served, to pick the session
 * to close when {@link MAX_MCP_SESSIONS} are open. "Last used" is an order (a counter), not a clock, so the
 * choice is the same on every run of the same requests.
 */
class McpSessionUse {
  private tick = 0;
  private readonly last = new Map<string, number>();
  private readonly busy = new Map<string, number>();

  /** Mark a session used now. */
  touch(id: string): void {
    this.last.set(id, ++this.tick);
  }

  /** A request of session `id` starts; it ends when its response finishes or its connection closes. */
  begin(id: string, res: Response): void {
    this.touch(id);
    this.busy.set(id, (this.busy.get(id) ?? 0) + 1);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const n = (this.busy.get(id) ?? 1) - 1;
      if (n > 0) this.busy.set(id, n);
      else this.busy.delete(id);
      if (this.last.has(id)) this.touch(id);
    };
    res.once('finish', end);
    res.once('close', end);
  }

  /** Forget a closed session. */
  forget(id: string): void {
    this.last.delete(id);
    this.busy.delete(id);
  }

  /** The open session used least recently that serves no request (an open SSE stream counts as one), or null. */
  leastRecentlyUsedIdle(ids: Iterable<string>): string | null {
    let best: string | null = null;
    for (const id of ids) {
      if (this.busy.has(id)) continue;
      if (best === null || (this.last.get(id) ?? 0) < (this.last.get(best) ?? 0)) best = id;
    }
    return best;
  }
}

/**
 * One new MCP session: an SDK transport that registers itself under its id once `initialize` has been
 * answered and removes itself when closed (`DELETE`, or the server stopping), connected to a new MCP server
 * over the shared research session.
 */
async function openMcpSession(session: ProxySession, transports: Map<string, StreamableHTTPServerTransport>, use: McpSessionUse): Promise<StreamableHTTPServerTransport> {
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    enableJsonResponse: true,
    onsessioninitialized: (id) => {
      transports.set(id, transport);
      use.touch(id);
    },
  });
  transport.onclose = () => {
    if (transport.sessionId !== undefined) {
      transports.delete(transport.sessionId);
      use.forget(transport.sessionId);
    }
  };
  await createMcpServer(session).connect(transport);
  return transport;
}

/**
 * Check the bind rules before anything is started: a non-loopback `host` needs `allowRemote` and a token;
 * a token needs at least 16 characters.
 * @throws LoretraceError `usage` (exit 2) naming the rule.
 */
export function assertHttpBindAllowed(host: string, options: Pick<HttpServerOptions, 'allowRemote' | 'token'>): void {
  const loopback = isLoopbackHost(host);
  if (!loopback && !options.allowRemote) {
    throw new LoretraceError('usage', `refusing to bind ${host}: it is not a loopback address; pass --allow-remote with a bearer token to serve beyond this machine`, { expected: '127.0.0.1 or --allow-remote' }, 2);
  }
  if (!loopback && options.token === undefined) {
    throw new LoretraceError('usage', `--allow-remote needs a bearer token (--token-file <file> or LORETRACE_PROXY_TOKEN)`, { expected: 'a token of at least 16 characters' }, 2);
  }
  if (options.token !== undefined && options.token.length < 16) {
    throw new LoretraceError('usage', `the bearer token is ${options.token.length} characters; use at least 16`, { expected: 'a token of at least 16 characters' }, 2);
  }
}

/**
 * Answer a request node's HTTP parser refused before express saw it (both `Content-Length` and
 * `Transfer-Encoding`, a bad chunk, headers over 16 KiB, a header timeout) with the same JSON error body as
 * every other refusal, instead of node's bare `400` without a body: `431` for headers too large, `408` for a
 * timeout, else `400`, code `bad_request`, the message naming the parser's reason. Not recorded: the request
 * was never parsed, so no tool is known. A reset or unwritable socket is just closed.
 */
function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const text = status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
  const reason = (err.message ?? '').replace(/^Parse Error:\s*/, '').slice(0, 200);
  const body = JSON.stringify({ error: { code: 'bad_request', message: `the request is not valid HTTP/1.1 (${err.code ?? 'parse error'}: ${reason})` } });
  socket.end(`HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`);
}

/**
 * Start the HTTP server of a session.
 *
 * @throws LoretraceError `usage` (exit 2) for a non-loopback host without `allowRemote`, `allowRemote`
 *   without a token, or a token shorter than 16 characters; `listen_failed` when the address cannot be bound.
 */
export async function startHttpServer(session: ProxySession, options: HttpServerOptions = {}): Promise<HttpServerHandle> {
  const host = options.host ?? '127.0.0.1';
  assertHttpBindAllowed(host, options);
  const loopback = isLoopbackHost(host);
  const allowedHosts = new Set<string>();
  const app0 = { allowedHosts, ...(options.token !== undefined ? { token: options.token } : {}) };
  const { app, mcp } = createHttpApp(session, app0);
  const server: NodeHttpServer = await new Promise((resolve, reject) => {
    const s = app.listen(options.port ?? 0, host, (err?: Error) => (err ? reject(err) : resolve(s)));
    s.once('error', reject);
  }).catch((e: Error) => {
    throw new LoretraceError('listen_failed', `cannot listen on ${hostLabel(host)}:${options.port ?? 0}: ${e.message}`);
  }) as NodeHttpServer;
  server.on('clientError', answerClientError);
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.maxConnections = 256;
  const port = (server.address() as AddressInfo).port;
  for (const n of acceptedHostNames(host)) allowedHosts.add(`${hostLabel(n)}:${port}`.toLowerCase());
  for (const h of options.allowedHosts ?? []) allowedHosts.add(h.toLowerCase());
  return {
    url: `http://${hostLabel(host)}:${port}`,
    host,
    port,
    mcpSessions: () => mcp.transports.size,
    close: async () => {
      await mcp.closeAll();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
    },
  };
}
