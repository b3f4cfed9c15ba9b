/**
 * From an index path to the file on disk.
 *
 * Index paths are NFC (src/types.ts); a file whose name is stored in another normalisation on disk (NFD, as
 * macOS tools write) is found by listing each folder and comparing NFC forms. The lookup starts from an
 * index path — never from request text — and never leaves `root`: each step is a name listed in the folder
 * above it. Shared by `readNoteLines` (src/indexer/lookup.ts) and the proxy's checked reader
 * (src/proxy/safe-read.ts).
 */
import fs from 'node:fs';
import { join } from 'node:path';

const diskPaths = new Map<string, string>();

/**
 * The absolute on-disk path of the indexed note `path` under `root`: `join(root, path)` when that exists,
 * else the folder-by-folder NFC match, else `join(root, path)` again (the caller's read then fails with
 * ENOENT and reports the note stale). Found paths are cached per root + path. Never throws.
 */
export async function onDiskPath(root: string, path: string): Promise<string> {
  const key = `${root}\u0000${path}`;
  const hit = diskPaths.get(key);
  if (hit !== undefined) return hit;
  const direct = join(root, ...path.split('/'));
  let found = direct;
  try {
    await fs.promises.lstat(direct);
  } catch {
    let dir = root;
    for (const segment of path.split('/')) {
      let names: string[];
      try {
        names = await fs.promises.readdir(dir);
      } catch {
        names = [];
      }
      const name = names.find((n) => n === segment) ?? names.find((n) => n.normalize('NFC') === segment);
      if (name === undefined) return direct;
      dir = join(dir, name);
    }
    found = dir;
  }
  diskPaths.set(key, found);
  return found;
}
