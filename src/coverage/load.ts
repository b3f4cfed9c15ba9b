/**
 * The I/O around the pure report: read every note's current lines (for line figures and text checks)
 * and write the three report files.
 */
import { writeFileNoFollow, assertNoSymlinkOnPath } from '../safe-write.js';
import { join } from 'node:path';
import { stat } from 'node:fs/promises';
import { LoretraceError, isLoretraceError } from '../errors.js';
import { readNoteLines } from '../indexer/lookup.js';
import type { VaultIndex } from '../types.js';
import { renderCoverageHtml } from './render-html.js';
import type { CoverageHtmlContext } from './render-html.js';
import { renderCoverageMarkdown } from './render-md.js';
import type { CoverageReport } from './types.js';

/**
 * Current lines of every note of `index` (through `readNoteLines`, which checks each file's sha256
 * against the index), keyed by vault path — the `noteLines` option of `coverageReport`.
 *
 * A note that cannot be re-read as indexed (`stale_file`: changed or vanished since indexing) is left
 * out of the map; `coverageReport` then rebuilds its lines from the index's chunks, which hold every
 * non-blank body line of the indexed snapshot. Never throws for a single note.
 */
export async function loadNoteLines(index: VaultIndex): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const n of index.notes) {
    try {
      out.set(n.path, await readNoteLines(index, n.path));
    } catch (e) {
      if (!isLoretraceError(e)) throw e;
    }
  }
  return out;
}

/** Paths of the files {@link writeCoverageFiles} wrote. */
export interface CoverageFiles {
  json: string;
  md: string;
  html: string;
}

/**
 * Write `coverage.json` (2-space JSON + newline), `coverage.md` and `coverage.html` into `outDir`
 * (created when missing). Same report and context ⇒ byte-identical files. `context` gives the HTML page
 * the note lines and the index it shows (see `CoverageHtmlContext`; `loadNoteLines`).
 *
 * Never written through a symlink (src/safe-write.ts): the folder, a folder above it or one of the three
 * files being a symlink is `output_symlink` (exit 2) before anything is written.
 *
 * @throws LoretraceError `output_symlink`; `coverage_unwritable` naming the folder when it exists and is not a
 *   folder (exit 2, nothing written) or cannot be created or written (exit 1).
 */
export async function writeCoverageFiles(report: CoverageReport, outDir: string, context: CoverageHtmlContext = {}): Promise<CoverageFiles> {
  const files: CoverageFiles = { json: join(outDir, 'coverage.json'), md: join(outDir, 'coverage.md'), html: join(outDir, 'coverage.html') };
  for (const f of [outDir, files.json, files.md, files.html]) assertNoSymlinkOnPath(f);
  // A file where the folder goes is refused as a bad --out (exit 2, README "Exit codes"), not reported as the
  // system's ENOTDIR on a temp file name.
  if (await stat(outDir).then((st) => !st.isDirectory(), () => false)) {
    throw new LoretraceError('coverage_unwritable', `cannot write the coverage report into ${outDir}: it exists and is not a folder; expected a folder, or a path that does not exist yet (nothing written)`, { file: outDir, expected: 'a writable folder' }, 2);
  }
  try {
    await writeFileNoFollow(files.json, JSON.stringify(report, null, 2) + '\n');
    await writeFileNoFollow(files.md, renderCoverageMarkdown(report));
    await writeFileNoFollow(files.html, renderCoverageHtml(report, context));
  } catch (e) {
    if (e instanceof LoretraceError && e.code === 'output_symlink') throw e;
    throw new LoretraceError('coverage_unwritable', `cannot write the coverage report into ${outDir}: ${(e as Error).message}`, { file: outDir, expected: 'a writable folder' });
  }
  return files;
}
