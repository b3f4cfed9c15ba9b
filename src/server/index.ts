/**
 * Server barrel: MCP (stdio) and HTTP transports over a ProxySession (docs/PROXY.md).
 *
 * `startHttpServer` loads src/server/http.ts (express, the MCP SDK's Streamable HTTP transport and the
 * HTTP framework under it) on its first call, not when the library is imported: a process that only
 * indexes, searches or retrieves never pays for that stack's modules (13 MiB of resident memory with
 * `dist/index.js` imported, docs/PERFORMANCE.md "Round 7"). `createMcpServer` returns the SDK's `Server`
 * synchronously, so the MCP module stays a static import.
 */
import type { ProxySession } from '../proxy/session.js';
import type { HttpServerHandle, HttpServerOptions } from './http.js';

export { createMcpServer, serveMcpStdio } from './mcp.js';
export type { McpStdioHandle } from './mcp.js';
export type { HttpServerOptions, HttpServerHandle } from './http.js';

/**
 * Start the HTTP server of a session: the REST routes `POST /tools/<name>` and MCP's Streamable HTTP
 * transport at `/mcp`, on `options.host` (default `127.0.0.1`) and `options.port` (default 0, a free port).
 * Same function as src/server/http.ts `startHttpServer`, whose module is imported on the first call.
 *
 * @throws LoretraceError `usage` (exit 2) for a non-loopback host without `allowRemote`, `allowRemote`
 *   without a token, or a token shorter than 16 characters; `listen_failed` when the address cannot be bound.
 */
export async function startHttpServer(session: ProxySession, options: HttpServerOptions = {}): Promise<HttpServerHandle> {
  const http = await import('./http.js');
  return http.startHttpServer(session, options);
}
