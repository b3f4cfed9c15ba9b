/**
 * loretrace public API. Each pipeline stage is one module with one function from data to data:
 * vault → notes → chunks + links → index → policy → traversal → excerpts/trace → packet / proxy / coverage.
 * The exact export list is frozen by tests/api.test.ts.
 */
export * from './errors.js';
export type * from './types.js';
export * from './packet/index.js';
