/**
 * One tool call on both transports of a session, for the hostile-input tables: MCP (the SDK client over an
 * in-memory pair, the same `createMcpServer` the stdio server runs) and HTTP (`startHttpServer` on
 * loopback). Each answer is reduced to what a client sees: the refusal code (null for a result), the HTTP
 * status (MCP: null), the whole response text and the ledger seq.
 */
import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createMcpServer } from '../../src/server/mcp.js';
import { startHttpServer } from '../../src/server/http.js';
import type { ProxySession } from '../../src/proxy/session.js';

/** What a client sees of one call. */
export interface SeenAnswer {
  transport: 'mcp' | 'http';
  /** Refusal code, or null for a tool result. */
  code: string | null;
  /** HTTP status (null on MCP). */
  status: number | null;
  /** The refusal message (null for a result). */
  message: string | null;
  /** The parsed result (structuredContent / JSON body) of a successful call. */
  result: Record<string, any> | null;
  /** Everything the client received, as text. */
  text: string;
  /** Ledger seq of the call's record. */
  seq: number;
}

/** Both transports of one session. */
export interface BothTransports {
  call(transport: 'mcp' | 'http', tool: string, args: unknown): Promise<SeenAnswer>;
  /** MCP `resources/read` of `uri`: the JSON-RPC error code and data of a refusal, or null for a read. */
  readResource(uri: string): Promise<{ code: number; data: unknown } | null>;
  close(): Promise<void>;
}

/** POST a JSON body to the HTTP server (5 s timeout: a hang fails the test). */
function post(url: string, path: string, body: string): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method: 'POST', path, headers: { 'content-type': 'application/json' }, agent: false, timeout: 5000 }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (data += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: data }));
    });
    req.on('timeout', () => req.destroy(new Error('HTTP request timed out')));
    req.on('error', reject);
    req.write(body);
    req.end();
  });
}

/** Connect an MCP client and an HTTP server to `session`. */
export async function bothTransports(session: ProxySession): Promise<BothTransports> {
  const server = createMcpServer(session);
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'hostile', version: '0.0.0' });
  await Promise.all([server.connect(a), client.connect(b)]);
  const http = await startHttpServer(session, { host: '127.0.0.1', port: 0 });
  return {
    async call(transport, tool, args) {
      if (transport === 'mcp') {
        const r = (await client.callTool({ name: tool, arguments: args as Record<string, unknown> }, undefined, { timeout: 5000 })) as any;
        const refusal = r._meta?.['loretrace/refusal'] as { code: string; message: string } | undefined;
        return {
          transport, code: refusal?.code ?? null, status: null, message: refusal?.message ?? null,
          result: refusal ? null : (r.structuredContent ?? null), text: JSON.stringify(r), seq: r._meta?.['loretrace/ledger_seq'] as number,
        };
      }
      const r = await post(http.url, `/tools/${tool}`, JSON.stringify(args));
      const body = r.text === '' ? null : JSON.parse(r.text);
      const error = r.status >= 400 ? (body?.error as { code: string; message: string } | undefined) : undefined;
      return {
        transport, code: error?.code ?? null, status: r.status, message: error?.message ?? null,
        result: error ? null : body, text: r.text, seq: Number(r.headers['loretrace-ledger-seq']),
      };
    },
    async readResource(uri) {
      try {
        await client.readResource({ uri }, { timeout: 5000 });
        return null;
      } catch (e) {
        const err = e as { code: number; data: unknown };
        return { code: err.code, data: err.data };
      }
    },
    async close() {
      await client.close();
      await http.close();
    },
  };
}
