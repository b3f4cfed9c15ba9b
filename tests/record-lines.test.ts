import { describe, expect, it } from 'vitest';
import { indexRecordLines, recordLineReader } from '../src/indexer/record-lines.js';
import { shardOf } from '../src/indexer/store.js';

const line = (path: string, extra: string) => `{"path":${JSON.stringify(path)},${extra}}`;

describe('indexRecordLines', () => {
  it('maps each record path to the byte range of its line, escapes and UTF-8 included', () => {
    const a = line('World/Café "Noir".md', '"n":1');
    const b = line('Edge/x\\y.md', '"n":2');
    const buf = Buffer.from(`${a}\n${b}\n`, 'utf8');
    const m = indexRecordLines(buf);
    expect([...m.keys()]).toEqual(['World/Café "Noir".md', 'Edge/x\\y.md']);
    const aBytes = Buffer.byteLength(a);
    expect(m.get('World/Café "Noir".md')).toEqual([0, aBytes]);
    expect(m.get('Edge/x\\y.md')).toEqual([aBytes + 1, aBytes + 1 + Buffer.byteLength(b)]);
    expect(buf.toString('utf8', ...m.get('Edge/x\\y.md')!)).toBe(b);
  });

  it('refuses a line that is not a record line (CorruptIndexError, with the byte offset)', () => {
    expect(() => indexRecordLines(Buffer.from('{"path":"a.md"}\n[1,2]\n'))).toThrow(expect.objectContaining({ name: 'CorruptIndexError', message: 'record line at byte 16 does not start with {"path":' }));
  });
});

describe('recordLineReader', () => {
  it('returns one record line by path from in-memory shards, null for an unknown path', () => {
    const paths = ['a.md', 'b.md', 'c.md', 'd.md'];
    const shards: string[][] = [[], []];
    for (const p of paths) shards[shardOf(p, 2)]!.push(line(p, `"v":"${p}"`));
    const refs = shards.map((ls) => ({ file: null, data: Buffer.from(ls.map((l) => `${l}\n`).join('')), lines: ls.length }));
    const read = recordLineReader(null, refs);
    for (const p of paths) expect(read(p)).toBe(line(p, `"v":"${p}"`));
    expect(read('zzz.md')).toBeNull();
  });

  it('throws CorruptIndexError when a shard holds fewer records than the manifest says', () => {
    const read = recordLineReader(null, [{ file: null, data: Buffer.from(`${line('a.md', '"v":1')}\n`), lines: 2 }]);
    expect(() => read('a.md')).toThrow(expect.objectContaining({ name: 'CorruptIndexError', message: 'data file (memory) has 1 records, expected 2' }));
  });
});
