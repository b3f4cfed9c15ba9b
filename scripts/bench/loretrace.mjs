/**
 * Access to loretrace's public API (dist/index.js, plus the traversal and proxy stage barrels for their
 * query builders and limits) for the benchmark phases. Every phase calls these functions only
 * (indexVault, search, compilePolicy, traverse, the HTTP proxy server), never other internals. When a function is missing (dist not built, stage not landed yet) the phase is recorded
 * as `unavailable` with the reason instead of crashing the run.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Thrown when a phase cannot run because loretrace lacks what it needs; the harness records it. */
export class Unavailable extends Error {
  /** @param {string} reason */
  constructor(reason) {
    super(reason);
    this.name = 'Unavailable';
  }
}

/** @type {Map<string, Promise<Record<string, any>>>} */
const cache = new Map();

/**
 * Import `<distDir>/index.js` (once per process).
 * @param {string} distDir
 * @returns {Promise<Record<string, any>>}
 * @throws {Unavailable} when dist/index.js is absent or fails to import
 */
export async function loadApi(distDir) {
  const file = join(distDir, 'index.js');
  if (!cache.has(file)) {
    cache.set(
      file,
      (async () => {
        if (!existsSync(file)) throw new Unavailable(`${file} not found (run npm run build)`);
        try {
          // The public API, plus the stage barrels whose helpers the phases use (requirementQueries,
          // packetQueries, DEFAULT_LIMITS), which are not part of the public surface.
          const stages = await Promise.all(['traversal', 'proxy'].map((d) => import(pathToFileURL(join(distDir, d, 'index.js')).href)));
          return Object.assign({}, ...stages, await import(pathToFileURL(file).href));
        } catch (e) {
          throw new Unavailable(`importing ${file} failed: ${e instanceof Error ? e.message : String(e)}`);
        }
      })(),
    );
  }
  return cache.get(file);
}

/**
 * The API with the named functions checked present.
 * @param {string} distDir
 * @param {string[]} names exported function names the phase needs
 * @throws {Unavailable} naming every missing export
 */
export async function requireApi(distDir, names) {
  const api = await loadApi(distDir);
  const missing = names.filter((n) => typeof api[n] !== 'function');
  if (missing.length > 0) throw new Unavailable(`dist/index.js does not export ${missing.join(', ')} yet`);
  return api;
}

/**
 * `indexVault(root, { indexDir })` with the persisted index kept in `indexDir` (outside the vault).
 * LORETRACE_INDEX_DIR is set too, for builds that read only the environment.
 * @param {Record<string, any>} api
 * @param {string} root
 * @param {string} indexDir
 */
export async function indexWith(api, root, indexDir) {
  process.env.LORETRACE_INDEX_DIR = indexDir;
  return api.indexVault(root, { indexDir });
}
