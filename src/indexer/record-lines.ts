/**
 * One record at a time from the store's JSONL record shards (docs/INDEX.md "Lazy records").
 *
 * A search hit or a phrase check needs the chunks (or the title and aliases) of one note, not the whole
 * family. A shard is read once and hash-checked as a whole (its file name carries its content hash), its
 * line starts are indexed by record path from the first bytes of each line (`{"path":"…",`), and only
 * the lines asked for are decoded and parsed. Parsing a 1 MB shard costs far more than reading it.
 */
import { readDataBytesSync, CorruptIndexError } from './store.js';
import { shardOf } from './store.js';

/** Where one record shard lives: a data file of the index folder, or bytes kept in memory. */
export interface RecordShardRef {
  file: string | null;
  data: Buffer | null;
  /** Number of lines (records) the shard must have. */
  lines: number;
}

/**
 * Byte ranges `[start, end)` (end excludes the line feed) of each line of a JSONL record shard, by
 * the record's `path` (the first key of every record line).
 *
 * @throws CorruptIndexError when a line does not start with `{"path":"` or its path is not a JSON string.
 */
export function indexRecordLines(buf: Buffer): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  const PREFIX = '{"path":"';
  let start = 0;
  while (start < buf.length) {
    let end = buf.indexOf(10, start);
    if (end < 0) end = buf.length;
    if (buf.toString('latin1', start, start + PREFIX.length) !== PREFIX) throw new CorruptIndexError(`record line at byte ${start} does not start with {"path":`);
    let i = start + PREFIX.length;
    for (; i < end; i++) {
      const c = buf[i]!;
      if (c === 92) i++;
      else if (c === 34) break;
    }
    let path: string;
    try {
      path = JSON.parse(buf.toString('utf8', start + PREFIX.length - 1, i + 1)) as string;
    } catch {
      throw new CorruptIndexError(`record line at byte ${start} has no readable path`);
    }
    out.set(path, [start, end]);
    start = end + 1;
  }
  return out;
}

/**
 * A reader of single record lines from one record family (`notes` or `chunks`): `(path) => line | null`.
 * Shards are loaded on first use and kept; the shard of a path is `shardOf(path, refs.length)`.
 *
 * @throws CorruptIndexError (from the returned function) when a shard file is missing, damaged (hash),
 *   or does not hold `lines` records — callers fall back to re-parsing the vault, as for whole families.
 */
export function recordLineReader(indexDir: string | null, refs: readonly RecordShardRef[]): (path: string) => string | null {
  const loaded = new Map<number, { buf: Buffer; lines: Map<string, [number, number]> }>();
  return (path) => {
    if (refs.length === 0) return null;
    const s = shardOf(path, refs.length);
    let shard = loaded.get(s);
    if (!shard) {
      const ref = refs[s]!;
      let buf: Buffer;
      if (ref.data !== null) buf = ref.data;
      else if (ref.file !== null && indexDir !== null) buf = readDataBytesSync(indexDir, ref.file);
      else throw new CorruptIndexError('a record shard could not be saved');
      const lines = indexRecordLines(buf);
      if (lines.size !== ref.lines) throw new CorruptIndexError(`data file ${ref.file ?? '(memory)'} has ${lines.size} records, expected ${ref.lines}`);
      shard = { buf, lines };
      loaded.set(s, shard);
    }
    const range = shard.lines.get(path);
    return range ? shard.buf.toString('utf8', range[0], range[1]) : null;
  };
}
