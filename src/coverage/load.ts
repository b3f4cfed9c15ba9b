/**
 * The I/O around the pure report: read every note's current lines (for line figures and text checks)
 * and write the three report files.
 */
import { writeFileNoFollow, assertNoSymlinkOnPath, checkOutputPath } from '../safe-write.js';
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
 * Refuse a `--out` folder the report cannot be written into, before anything is read: a symlink on the path
 * (`output_symlink`), an existing file in the folder's place (`coverage_unwritable`), a folder that cannot be
 * made or takes no new entry (`output_unwritable`: src/safe-write.ts `checkOutputPath`). All exit 2, nothing
 * written. `shown` is the folder as the user named it, for the messages.
 * @throws LoretraceError as listed.
 */
export async function checkCoverageOut(outDir: string, shown: string = outDir): Promise<void> {
  for (const f of [outDir, join(outDir, 'coverage.json'), join(outDir, 'coverage.md'), join(outDir, 'coverage.html')]) assertNoSymlinkOnPath(f);
  // A file where the folder goes is refused as a bad --out (exit 2, README "Exit codes"), not reported as the
  // system's ENOTDIR on a temp file name.
  if (await stat(outDir).then((st) => !st.isDirectory(), () => false)) {
    throw new LoretraceError('coverage_unwritable', `cannot write the coverage report into ${outDir}: it exists and is not a folder; expected a folder, or a path that does not exist yet (nothing written)`, { file: outDir, expected: 'a writable folder' }, 2);
  }
  checkOutputPath(join(outDir, 'coverage.json'), `--out ${shown}`);
}

/**
 * Write `coverage.json` (2-space JSON + newline), `coverage.md` and `coverage.html` into `outDir`
 * (created when missing). Same report and context ⇒ byte-identical files. `context` gives the HTML page
 * the note lines and the index it shows (see `CoverageHtmlContext`; `loadNoteLines`).
 *
 * Never written through a symlink (src/safe-write.ts): the folder, a folder above it or one of the three
 * files being a symlink is `output_symlink` (exit 2) before anything is written. The CLI calls
 * {@link checkCoverageOut} before reading the artifacts, so a bad `--out` fails at once.
 *
 * @throws LoretraceError `output_symlink`; `coverage_unwritable` naming the folder when it exists and is not a
 *   folder (exit 2, nothing written) or cannot be written (exit 1); `output_unwritable` (exit 2) when the folder
 *   cannot be made ({@link checkCoverageOut}).
 */
export async function writeCoverageFiles(report: CoverageReport, outDir: string, context: CoverageHtmlContext = {}): Promise<CoverageFiles> {
  const files: CoverageFiles = { json: join(outDir, 'coverage.json'), md: join(outDir, 'coverage.md'), html: join(outDir, 'coverage.html') };
  await checkCoverageOut(outDir);
  try {
    await writeFileNoFollow(files.json, JSON.stringify(report, null, 2) + '\n');
    await writeFileNoFollow(files.md, renderCoverageMarkdown(report));
    await writeFileNoFollow(files.html, renderCoverageHtml(report, context));
  } catch (e) {
    if (e instanceof LoretraceError && (e.code === 'output_symlink' || e.code === 'output_unwritable')) throw e;
    throw new LoretraceError('coverage_unwritable', `cannot write the coverage report into ${outDir}: ${(e as Error).message}`, { file: outDir, expected: 'a writable folder' });
  }
  return files;
}
