/** Proxy stage barrel: the sandboxed research session, its limits and its tool surface (docs/PROXY.md); the ledger it writes lives in `src/receipts/`. */
export { ProxySession, openProxySession } from './session.js';
export type { ProxyResponse, ProxyTransport, ProxyClock, ProxySessionOptions, OpenProxySessionOptions } from './session.js';
export { DEFAULT_LIMITS, parseLimitOverrides } from './limits.js';
export type { ServerLimits, SessionBudgets, PolicyBudgets } from './limits.js';
export { REFUSAL_CODES } from './refusals.js';
export type { RefusalCode, Refusal } from './refusals.js';
export { TOOL_NAMES, LORE_DATA_NOTICE } from './tools.js';
export type { ToolName, ToolResult } from './tools.js';
