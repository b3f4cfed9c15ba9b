/**
 * Scaled vaults for the benchmark: `scale` copies of a source vault, each in its own subfolder
 * (`c000/`, `c001/`, …) of a fresh folder named after the source vault (so the ref namespace stays
 * the source's name, e.g. `AetheriaLore`). Copies are byte-identical, so every scale has exactly
 * `scale ×` the notes, bytes and chunks of ×1 — the inputs are deterministic.
 */
import { mkdir, readdir, readFile, writeFile, copyFile, stat } from 'node:fs/promises';
import { join, relative, sep, basename } from 'node:path';

/** Folders never walked (same rule loretrace applies: dot-folders and node_modules). */
function skipDir(name) {
  return name.startsWith('.') || name === 'node_modules';
}

/**
 * Every file under `root` (recursively), as vault-relative POSIX paths sorted by code unit. Paths are
 * exactly as on disk (not NFC-normalised: a macOS-made vault may hold NFD names); use `.normalize('NFC')`
 * to turn one into a loretrace vault path for a ref.
 * @param {string} root absolute folder
 * @param {(rel: string) => boolean} [keep] filter on the relative path; default: `.md` files
 * @returns {Promise<string[]>}
 */
export async function listFiles(root, keep = (rel) => rel.toLowerCase().endsWith('.md')) {
  const out = [];
  async function walk(dir) {
    const entries = await readdir(dir, { withFileTypes: true });
    for (const e of entries) {
      const abs = join(dir, e.name);
      if (e.isDirectory()) {
        if (!skipDir(e.name)) await walk(abs);
      } else if (e.isFile()) {
        const rel = relative(root, abs).split(sep).join('/');
        if (keep(rel)) out.push(rel);
      }
    }
  }
  await walk(root);
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Name of copy `i` (zero-padded to 3 digits: c000 … c299). @param {number} i */
export function copyName(i) {
  return `c${String(i).padStart(3, '0')}`;
}

/**
 * Build a ×`scale` vault: `<parent>/<basename(source)>/c000/…`, `c001/…`, … Every file of the source
 * (markdown and attachments alike, dot-folders excluded) is copied into each subfolder.
 * @param {string} source absolute path of the source vault
 * @param {string} parent folder to create the scaled vault in (must be empty or new)
 * @param {number} scale number of copies ≥ 1
 * @returns {Promise<{ root: string, namespace: string, files: number, notes: number, bytes: number, note_bytes: number }>}
 *   `files`/`bytes`: everything copied; `notes`/`note_bytes`: the `.md` files only (bytes on disk).
 */
export async function buildScaledVault(source, parent, scale) {
  if (!Number.isInteger(scale) || scale < 1) throw new RangeError(`bench: scale must be an integer ≥ 1 (got ${scale})`);
  const namespace = basename(source);
  const root = join(parent, namespace);
  const all = await listFiles(source, () => true);
  const sizes = new Map();
  for (const rel of all) sizes.set(rel, (await stat(join(source, rel))).size);
  const dirs = [...new Set(all.map((rel) => rel.split('/').slice(0, -1).join('/')))].sort();
  let files = 0, notes = 0, bytes = 0, noteBytes = 0;
  for (let i = 0; i < scale; i++) {
    const base = join(root, copyName(i));
    for (const d of dirs) await mkdir(join(base, ...d.split('/').filter(Boolean)), { recursive: true });
    await mkdir(base, { recursive: true });
    for (const rel of all) {
      await copyFile(join(source, ...rel.split('/')), join(base, ...rel.split('/')));
      const size = sizes.get(rel);
      files++;
      bytes += size;
      if (rel.toLowerCase().endsWith('.md')) {
        notes++;
        noteBytes += size;
      }
    }
  }
  return { root, namespace, files, notes, bytes, note_bytes: noteBytes };
}

/**
 * Append a deterministic edit to each of `paths` (vault-relative), starting from the original bytes,
 * so run `run` always produces the same file contents. Returns the originals for {@link restoreFiles}.
 * @param {string} root
 * @param {string[]} paths
 * @param {number} run
 * @param {Map<string, Buffer>} [originals] reuse originals captured by an earlier call
 */
export async function editFiles(root, paths, run, originals = new Map()) {
  for (const rel of paths) {
    const abs = join(root, ...rel.split('/'));
    if (!originals.has(rel)) originals.set(rel, await readFile(abs));
    const suffix = Buffer.from(`\n\nBench edit ${run}: the archive keeper notes a quiet change in ${rel.split('/').pop()}.\n`);
    await writeFile(abs, Buffer.concat([originals.get(rel), suffix]));
  }
  return originals;
}

/** Write back the bytes captured by {@link editFiles}. @param {string} root @param {Map<string, Buffer>} originals */
export async function restoreFiles(root, originals) {
  for (const [rel, bytes] of originals) await writeFile(join(root, ...rel.split('/')), bytes);
}
