/**
 * loretrace public API. Each pipeline stage is one module with one function from data to data:
 * vault → notes → chunks + links → index → policy → traversal → excerpts/trace → packet / proxy / coverage.
 * The exact export list is frozen by tests/api.test.ts.
 */
export * from './errors.js';
export type * from './types.js';
export * from './notes/index.js';
export * from './proxy/index.js';
export * from './server/index.js';
export * from './contracts/index.js';
export * from './packet/index.js';
export * from './receipts/index.js';
export * from './coverage/index.js';
export * from './indexer/index.js';
export * from './refs/index.js';
export * from './policy/index.js';
export * from './excerpts/index.js';
export * from './traversal/index.js';
