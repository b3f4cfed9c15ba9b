/**
 * "A record is flushed to disk before the response leaves" (Ledger): `node:fs` `writeSync` and the sync
 * calls (`fdatasyncSync` inline, `fdatasync` on the thread pool, `fsync`/`fsyncSync`) are wrapped to log
 * every ledger write and every completed sync by name, and each response is logged when it resolves; the
 * log must show the call's record written and a sync completed after it, before the response.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ProxySession } from '../src/proxy/session.js';
import { R, fixtureSession, tempDir } from './helpers/proxy.js';

const log = vi.hoisted(() => ({ events: [] as string[], fds: new Set<number>() }));
const SYNCS = new Set(['fsync', 'fdatasync', 'fsyncSync', 'fdatasyncSync']);

vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  const writeSync = ((fd: number, buf: Buffer, ...rest: unknown[]) => {
    const n = (actual.writeSync as (...a: unknown[]) => number)(fd, buf, ...rest);
    // A ledger line is one record in its RFC 8785 form: keys sorted, so `schema_version` and `seq` come last.
    const line = Buffer.isBuffer(buf) ? buf.toString('utf8') : '';
    if (log.fds.has(fd) || (line.startsWith('{"actor":') && line.includes('"schema_version":"loretrace.ledger'))) {
      log.fds.add(fd);
      const seq = /"seq":(\d+)[,}]/.exec(line.slice(line.lastIndexOf('"schema_version":')))?.[1];
      log.events.push(`write ${seq}`);
    }
    return n;
  }) as typeof actual.writeSync;
  const threadPool = (name: 'fsync' | 'fdatasync') => ((fd: number, cb: (e: NodeJS.ErrnoException | null) => void) =>
    actual[name](fd, (e) => {
      if (log.fds.has(fd)) log.events.push(name);
      cb(e);
    }));
  const inline = (name: 'fsyncSync' | 'fdatasyncSync') => ((fd: number) => {
    actual[name](fd);
    if (log.fds.has(fd)) log.events.push(name);
  });
  return {
    ...actual, writeSync,
    fsync: threadPool('fsync') as typeof actual.fsync, fdatasync: threadPool('fdatasync') as typeof actual.fdatasync,
    fsyncSync: inline('fsyncSync'), fdatasyncSync: inline('fdatasyncSync'),
  };
});

let tmp: { dir: string; cleanup: () => void };
let session: ProxySession | null = null;
beforeEach(() => {
  tmp = tempDir('loretrace-fsync-');
  log.events.length = 0;
  log.fds.clear();
});
afterEach(async () => {
  if (session) await session.close();
  session = null;
  tmp.cleanup();
});

describe('ProxySession.call', () => {
  it('syncs the SESSION_OPENED record before the session opens, and a lone call\'s TOOL_CALL and outcome with one inline fdatasync before its response', async () => {
    session = await fixtureSession({ ledgerPath: join(tmp.dir, 'f.jsonl') });
    log.events.push('opened');
    const a = session.call('lore_read', { ref: `${R.territories}#chunk1` }).then((r) => log.events.push(`response ${r.seq}`));
    await a;
    const b = session.call('lore_read', { ref: R.truth }).then((r) => log.events.push(`response ${r.seq}`));
    await b;
    // write 1 / write 3: the TOOL_CALLs; write 2 / write 4: their outcomes; one sync per call, inline (no other call in flight).
    expect(log.events).toEqual(['write 0', 'fdatasyncSync', 'opened', 'write 1', 'write 2', 'fdatasyncSync', 'response 2', 'write 3', 'write 4', 'fdatasyncSync', 'response 4']);
  });

  it('answers concurrent calls only after a sync that covers each call record (group commit on the thread pool)', async () => {
    session = await fixtureSession({ ledgerPath: join(tmp.dir, 'g.jsonl') });
    log.events.length = 0;
    await Promise.all(Array.from({ length: 10 }, (_, i) =>
      session!.call('lore_read', { ref: `${R.territories}#chunk${i % 3}` }).then((r) => log.events.push(`response ${r.seq}`))));
    for (let seq = 2; seq <= 20; seq += 2) {
      const call = log.events.indexOf(`write ${seq - 1}`);
      const written = log.events.indexOf(`write ${seq}`);
      const answered = log.events.indexOf(`response ${seq}`);
      expect(call).toBeGreaterThanOrEqual(0);
      expect(written).toBeGreaterThan(call);
      expect(answered).toBeGreaterThan(written);
      expect(log.events.slice(written, answered).some((e) => SYNCS.has(e))).toBe(true);
    }
    expect(log.events.filter((e) => e.startsWith('response')).length).toBe(10);
    // Never more syncs than calls: the call record rides on its outcome's sync; with ten calls in flight
    // the syncs run on the thread pool, shared by the calls that wait meanwhile.
    const syncs = log.events.filter((e) => SYNCS.has(e));
    expect(syncs.length).toBeLessThanOrEqual(10);
    expect(syncs).toContain('fdatasync');
  });
});
