import { join } from 'node:path';
import { main } from '../../src/cli/main.js';

/** What one in-process CLI run returned: its exit code and everything it wrote to stdout and stderr. */
export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/**
 * Run `loretrace <argv>` in-process in `dir`, with the index kept in `<dir>/index` and a fixed
 * `SOURCE_DATE_EPOCH`, so that records the run writes (ledger times, lock dates) are the same on every run.
 */
export async function runCliIn(dir: string, argv: string[]): Promise<CliRun> {
  let out = '';
  let err = '';
  const code = await main(argv, {
    stdout: (t) => void (out += t), stderr: (t) => void (err += t), cwd: dir,
    env: { LORETRACE_INDEX_DIR: join(dir, 'index'), SOURCE_DATE_EPOCH: '1735689600' },
  });
  return { code, out, err };
}
