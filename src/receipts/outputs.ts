/**
 * How every run writes its outputs (seed 002: "Historical strict-handoff packets must remain immutable";
 * "If content must change …, create the next version"), for the CLI commands and the library calls that
 * write files (`retrieveBatch`, src/packet/batch.ts):
 * - {@link guardOutputs}: an output named like a lock (`*.lock.json`) is refused (`output_named_like_lock`,
 *   exit 2); an output that exists is refused (`output_exists`, exit 2) unless `force`; a file
 *   listed in a loretrace lock of its folder (or a lock itself) is refused even with `force`
 *   (`output_locked`, exit 2) — write a new version under another name;
 * - {@link writeAllAtomic}: every file or none, each through a fresh temp file renamed into place, never
 *   through a symlink (`assertNoSymlinkOnPath`, src/safe-write.ts: `output_symlink`, exit 2);
 * - {@link lockTarget}: the `<name>.lock.json` written beside the outputs (src/receipts/lock.ts).
 */
import { lstat, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { LoretraceError } from '../errors.js';
import { buildLock, lockPathFor, lockedPaths } from './lock.js';
import type { BuildLockInput } from './lock.js';
import { checkOutputPath, assertNoSymlinkOnPath, makeOutputFolder } from '../safe-write.js';

/** One file a command writes: absolute path, text, and the option that named it (for messages). */
export interface OutputTarget {
  abs: string;
  text: string;
  option: string;
}

/** The JSON text loretrace writes for a document: 2-space indent, trailing newline, keys in insertion order. */
export function documentText(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}

/**
 * Refuse an output named like a lock file (`*.lock.json`) that is not the lock of another output of the run:
 * every folder scan takes such a file for a lock (`lock verify` and `capture check` would report it
 * `bad_lock`; `lockedPaths` would read it to decide what may be overwritten), and its own lock would be
 * `x.lock.lock.json`.
 * @throws LoretraceError `output_named_like_lock` (exit 2), naming the option and the file.
 */
export function refuseLockLikeNames(targets: readonly { abs: string; option: string }[]): void {
  const lockOfAnother = new Set(targets.map((t) => lockPathFor(t.abs)));
  for (const t of targets) {
    if (!t.abs.endsWith('.lock.json') || lockOfAnother.has(t.abs)) continue;
    throw new LoretraceError('output_named_like_lock', `${t.option} ${t.abs} ends in .lock.json, the name loretrace gives lock files: folder scans (lock verify, capture check, the never-overwrite check) would take it for a lock; choose a name that does not end in .lock.json (nothing written)`, { file: t.abs, expected: 'an output name not ending in .lock.json' }, 2);
  }
}

/**
 * Refuse an output file named with a trailing path separator (`--ledger out/`): a trailing `/` (or `\`)
 * always means a folder (as `keygen --out` reads it), and these outputs are files, so writing one under the
 * folder's name (`out`) would be silent data loss of the user's meaning. `given` is the path as typed:
 * `resolve` drops the separator.
 * @throws LoretraceError `usage` (exit 2), naming the option and the path.
 */
export function refuseFolderNames(targets: readonly { given: string; option: string }[]): void {
  for (const t of targets) {
    if (!/[\\/]$/.test(t.given)) continue;
    throw new LoretraceError('usage', `${t.option} ${t.given} ends in a path separator, so it names a folder; expected the path of a file to write (nothing written)`, { file: t.given, expected: 'a file path, not ending in / or \\' }, 2);
  }
}

/**
 * Refuse outputs that would overwrite a locked file (always) or an existing file (unless `force`); checked
 * before anything is built or written.
 * @throws LoretraceError `output_named_like_lock` ({@link refuseLockLikeNames}), `output_symlink` (a symlink on
 *   the path), `output_unwritable` (a folder on the path cannot be made or takes no new entry: `checkOutputPath`,
 *   src/safe-write.ts), `output_locked` / `output_exists` (exit 2), naming the option, the file and the lock.
 */
export async function guardOutputs(targets: readonly { abs: string; option: string }[], force: boolean): Promise<void> {
  refuseLockLikeNames(targets);
  const locks = new Map<string, Map<string, string>>();
  for (const t of targets) {
    checkOutputPath(t.abs, `${t.option} ${t.abs}`);
    const folder = dirname(t.abs);
    let listed = locks.get(folder);
    if (!listed) {
      listed = await lockedPaths(folder);
      locks.set(folder, listed);
    }
    const lock = listed.get(t.abs);
    if (lock !== undefined) {
      const what = lock === t.abs ? 'is a lock file' : `is listed in the lock ${lock}`;
      // A rerun of the same command lands here (every output is in the lock beside it), so say what works:
      // seed 002 — a locked run is kept, the next one is a new version.
      throw new LoretraceError('output_locked', `${t.option} ${t.abs} ${what}; a locked file is never overwritten, not even with --force: write the new version elsewhere (a new --out or --out-dir), or delete the earlier run's outputs together with the lock ${lock} (nothing written)`, { file: t.abs, expected: 'an output path no lock lists' }, 2);
    }
    let exists = false;
    try {
      await lstat(t.abs);
      exists = true;
    } catch {
      exists = false;
    }
    if (exists && !force) {
      throw new LoretraceError('output_exists', `${t.option} ${t.abs} already exists; outputs are never overwritten silently: pass --force to replace an unlocked file, or choose a new name (nothing written)`, { file: t.abs, expected: 'a path that does not exist yet' }, 2);
    }
  }
}

/** The lock target of a run whose main output is `mainOut`: `<name>.lock.json` beside it. */
export function lockTarget(mainOut: string, lock: Omit<BuildLockInput, 'lockPath'>): OutputTarget {
  const abs = lockPathFor(mainOut);
  return { abs, text: documentText(buildLock({ ...lock, lockPath: abs })), option: 'lock file' };
}

/**
 * Write every target or none: each text goes to a fresh temp file next to its target (created with
 * O_EXCL, so a planted file or symlink of that name is never followed), and only when all temp files
 * are written are they renamed into place. Missing folders are made first, one level at a time
 * (`makeOutputFolder`: `output_unwritable`, exit 2, before any file is written). On a failure the temp files
 * are removed and `write_failed` (exit 1) names the file.
 */
export async function writeAllAtomic(targets: readonly OutputTarget[]): Promise<void> {
  const temps: string[] = [];
  let renamed = 0;
  let current: OutputTarget | undefined;
  try {
    for (const t of targets) {
      current = t;
      assertNoSymlinkOnPath(t.abs);
      makeOutputFolder(dirname(t.abs), `${t.option} ${t.abs}`);
    }
    for (const t of targets) {
      current = t;
      const tmp = `${t.abs}.${process.pid}.${temps.length}.tmp`;
      await writeFile(tmp, t.text, { encoding: 'utf8', flag: 'wx' });
      temps.push(tmp);
    }
    for (let i = 0; i < targets.length; i++) {
      current = targets[i];
      assertNoSymlinkOnPath((targets[i] as OutputTarget).abs);
      await rename(temps[i] as string, (targets[i] as OutputTarget).abs);
      renamed = i + 1;
    }
  } catch (e) {
    await Promise.all(temps.slice(renamed).map((t) => rm(t, { force: true })));
    if (e instanceof LoretraceError && (e.code === 'output_symlink' || e.code === 'output_unwritable')) throw e;
    const done = targets.slice(0, renamed).map((t) => t.abs);
    throw new LoretraceError(
      'write_failed',
      `cannot write ${current?.option ?? 'output'} ${current?.abs ?? ''}: ${(e as Error).message}; ${done.length === 0 ? 'nothing was written' : `already written: ${done.join(', ')}`}`,
      { file: current?.abs ?? '' },
      1,
    );
  }
}
