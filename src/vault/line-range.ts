/**
 * A bounded line range of a file read as a stream: what `show "<note>#L1-L50"` serves for a note over
 * `max_file_bytes` (docs/PARSING.md "Big notes"), whose bytes the index never held. The file is read in
 * 64 KiB pieces and the read stops after the last line asked for, so memory is bounded by the lines
 * served (plus one piece), never by the file. Lines follow src/notes/lines.ts exactly: CRLF, lone CR and
 * lone LF each end one line, a leading BOM is not text, a final break does not start an extra line.
 */
import fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { LoretraceError } from '../errors.js';
import { fileAdmission } from './admission.js';

/** Bytes read per piece of the stream. */
const PIECE_BYTES = 64 * 1024;

/**
 * Lines `start..end` (1-based, inclusive) of the file at `abs`, after the admission rule of the scan
 * (a regular file with one hard link, not a symbolic link; opened with O_NOFOLLOW).
 *
 * @param abs   absolute path of the file on disk.
 * @param path  the vault path, for messages.
 * @param shown the ref as the user gave it, for messages.
 * @returns exactly `end - start + 1` lines, without their breaks.
 * @throws LoretraceError `not_found` when the file has fewer than `end` lines (the message gives its line
 *   count); `symlink`, `not_regular_file`, `hard_link` when the file is not admissible; `stale_file` when it
 *   vanished or cannot be opened.
 */
export async function readLineRange(abs: string, path: string, shown: string, start: number, end: number): Promise<string[]> {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(abs);
  } catch {
    throw new LoretraceError('stale_file', `${path} no longer exists`, { file: path });
  }
  const refusal = fileAdmission(st);
  if (refusal) throw new LoretraceError(refusal, `${path} is no longer admissible lore (${refusal.replace('_', ' ')})`, { file: path });
  const stream = fs.createReadStream(abs, { fd: openNoFollow(abs, path), highWaterMark: PIECE_BYTES });
  const walker = new LineWalker(start, end);
  try {
    for await (const piece of stream as AsyncIterable<Buffer>) {
      if (walker.feed(piece)) return walker.out;
    }
  } catch (e) {
    if (e instanceof LoretraceError) throw e;
    throw new LoretraceError('stale_file', `${path} cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`, { file: path });
  } finally {
    stream.destroy();
  }
  walker.finish();
  if (walker.out.length === end - start + 1) return walker.out;
  throw new LoretraceError('not_found', `ref ${shown}: ${path} has ${walker.lineCount()} lines, so L${start}-L${end} is outside it`, { file: path, data: { ref: shown } });
}

/** Open read-only without following a symbolic link swapped in after the lstat. */
function openNoFollow(abs: string, path: string): number {
  try {
    return fs.openSync(abs, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new LoretraceError('symlink', `${path} became a symbolic link`, { file: path });
    throw new LoretraceError('stale_file', `${path} cannot be opened (${code ?? 'error'})`, { file: path });
  }
}

/** Splits decoded pieces into lines, keeping only the lines of the range. */
class LineWalker {
  readonly out: string[] = [];
  private readonly decoder = new StringDecoder('utf8');
  /** Number of the line being read (1-based). */
  private line = 1;
  /** Text of the current line so far (kept only inside the range). */
  private current = '';
  /** Whether the current line has any character yet (a final break does not start a line). */
  private started = false;
  private pendingCR = false;
  private first = true;

  constructor(private readonly start: number, private readonly end: number) {}

  /** Feed one piece; true once line `end` is complete. */
  feed(piece: Buffer): boolean {
    return this.scan(this.decoder.write(piece));
  }

  /** End of file: the last line, when it had no final break. */
  finish(): void {
    this.scan(this.decoder.end());
    if (this.started && this.line >= this.start && this.line <= this.end) this.out.push(this.current);
    if (this.started) this.line++;
  }

  /** Lines in the file (valid after {@link finish}). */
  lineCount(): number {
    return this.line - 1;
  }

  private scan(s: string): boolean {
    if (this.first && s.length > 0) {
      this.first = false;
      if (s.charCodeAt(0) === 0xfeff) s = s.slice(1);
    }
    let i = 0;
    if (this.pendingCR && s.length > 0) {
      this.pendingCR = false;
      if (s.charCodeAt(0) === 10) i = 1;
    }
    let from = i;
    for (; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      if (this.line >= this.start) this.out.push(this.current + s.slice(from, i));
      this.current = '';
      this.started = false;
      this.line++;
      if (c === 13) {
        if (i + 1 < s.length) {
          if (s.charCodeAt(i + 1) === 10) i++;
        } else this.pendingCR = true;
      }
      from = i + 1;
      if (this.line > this.end) return true;
    }
    if (from < s.length) {
      this.started = true;
      if (this.line >= this.start) this.current += s.slice(from);
    }
    return false;
  }
}
