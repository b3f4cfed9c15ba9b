/** Server barrel: MCP (stdio) and HTTP transports over a ProxySession (docs/PROXY.md). */
export { createMcpServer, serveMcpStdio } from './mcp.js';
export type { McpStdioHandle } from './mcp.js';
export { startHttpServer } from './http.js';
export type { HttpServerOptions, HttpServerHandle } from './http.js';
