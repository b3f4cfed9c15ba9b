// Hostile coverage inputs (breaker regressions): non-regular files were opened (/dev/zero never ends,
// a FIFO blocks) or silently dropped from a folder (symlinks, FIFOs) without a skipped entry.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readArtifacts } from '../src/coverage/index.js';

const dir = mkdtempSync(join(tmpdir(), 'loretrace-hostile-coverage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readArtifacts', () => {
  it.skipIf(process.platform === 'win32')('lists symlinks and FIFOs inside a folder as skipped (never followed or opened) instead of dropping them', async () => {
    const art = join(dir, 'art');
    mkdirSync(join(art, 'loop'), { recursive: true });
    writeFileSync(join(art, 'empty.json'), '');
    symlinkSync('/etc/passwd', join(art, 'passwd.json'));
    symlinkSync('..', join(art, 'loop', 'up'));
    execFileSync('mkfifo', [join(art, 'fifo.json')]);
    const r = await readArtifacts(['art'], { cwd: dir });
    expect(r.artifacts).toEqual([]);
    expect(r.skipped).toEqual([
      { file: 'art/empty.json', reason: 'not_json', message: expect.stringMatching(/^art\/empty\.json: empty file; /) as unknown },
      { file: 'art/fifo.json', reason: 'unreadable', message: 'art/fifo.json: is a FIFO, not a regular file; expected an artifact file' },
      { file: 'art/loop/up', reason: 'unreadable', message: 'art/loop/up: is a symbolic link (not followed inside a folder; name its target on the command line to read it); expected an artifact file' },
      { file: 'art/passwd.json', reason: 'unreadable', message: 'art/passwd.json: is a symbolic link (not followed inside a folder; name its target on the command line to read it); expected an artifact file' },
    ]);
  });

  it('skips /dev/zero named on the command line instead of reading it forever', async () => {
    expect(await readArtifacts(['/dev/zero'], { cwd: dir })).toEqual({
      artifacts: [],
      skipped: [{ file: '/dev/zero', reason: 'unreadable', message: '/dev/zero: is a device, not a regular file; expected an artifact file' }],
    });
  });

  it.skipIf(process.platform === 'win32')('lists a FIFO named twice (alone and inside its folder) once', async () => {
    const d = join(dir, 'twice');
    mkdirSync(d);
    execFileSync('mkfifo', [join(d, 'f.json')]);
    const r = await readArtifacts(['twice', 'twice/f.json'], { cwd: dir });
    expect(r.skipped).toEqual([{ file: 'twice/f.json', reason: 'unreadable', message: 'twice/f.json: is a FIFO, not a regular file; expected an artifact file' }]);
  });
});
