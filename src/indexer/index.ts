/**
 * Indexer stage barrel (vault scan + persisted index + lookups + search): `indexVault` and what reads
 * its result. Internals (store layout, parse pool, search shards, tokenizer) stay private.
 */
export * from '../vault/index.js';
export { indexVault, indexStats, vaultAssets } from './build.js';
export type { IndexOptions, IndexStats } from './build.js';
export { getNote, chunksOf, outgoingLinks, backlinks, readNoteLines, overCapNotes } from './lookup.js';
export type { OverCapNote } from './lookup.js';
export { snapshotId, defaultIndexDir } from './store.js';
export { search, searchCorpus } from '../search/search.js';
export type { SearchOptions, SearchHit, SearchCorpus } from '../search/search.js';
