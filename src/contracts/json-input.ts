/**
 * Reading JSON input documents — packets, projected contexts, policies, captures, capture fragments,
 * configs — the one strict way:
 *
 * 1. **size cap before anything else**: a file larger than `maxBytes` (default {@link DEFAULT_MAX_INPUT_BYTES},
 *    8 MiB; `LORETRACE_MAX_INPUT_BYTES` in the CLI) is refused from `fstat` alone, never read, so a 50 MB
 *    string in a packet costs no memory (`input_too_large`);
 * 2. **strict UTF-8** (RFC 3629, Unicode table 3-7: no overlongs, no surrogates, nothing above U+10FFFF):
 *    an invalid byte is an error naming its 0-based byte offset (`not_utf8`), never a silent U+FFFD;
 * 3. a leading byte-order mark is ignored (Ghostlight reads with `utf-8-sig`);
 * 4. `JSON.parse`, with syntax errors reported by line and column (`bad_json`);
 * 5. **at most {@link MAX_JSON_DEPTH} levels** of nested arrays and objects (`json_too_deep`, with the line,
 *    column and pointer where it goes deeper): every later step that walks the value is recursive;
 * 6. **nothing a JavaScript reader would lose**: no key named `__proto__` (`proto_key`), no integer beyond
 *    ±(2^53 − 1) (`unsafe_integer`, which `JSON.parse` would round), no number beyond the largest double
 *    (`non_finite_number`: `1e400` reads as Infinity, which JSON writes as `null`), no non-zero number that
 *    underflows to 0 (`2e-400`) and, in an integer field (`rules.ts` `isIntegerField`: line numbers, depths,
 *    counts, any `max_…`), no fraction or exponent (`1.9999999999999999` reads as 2) (`lossy_number`) —
 *    refused with the pointer and line, never silently dropped, rounded or nulled;
 * 7. **no duplicate keys** anywhere (`duplicate_key`, with the JSON pointer and the line of both
 *    occurrences): JSON.parse keeps the last value, so a packet listing `allowed_prefixes` twice would be
 *    enforced with the second while a reviewer reads the first. The ledger verifier refuses duplicates
 *    with the same scanner (`jsonDuplicateKey`).
 *
 * All these errors exit 2 in the CLI (the input cannot be read as written).
 */
import fs from 'node:fs';
import { LoretraceError } from '../errors.js';
import { MAX_JSON_DEPTH, jsonDuplicateKey, jsonLossyValue, jsonSyntaxError, jsonTooDeep, lineColumnAt, shortPointer } from './rules.js';

/** Default cap on a JSON input document, in bytes (8 MiB). */
export const DEFAULT_MAX_INPUT_BYTES = 8 * 1024 * 1024;

/** Options of {@link decodeJsonDocument} and {@link readJsonDocumentFile}. */
export interface JsonInputOptions {
  /** Largest document accepted, in bytes; default {@link DEFAULT_MAX_INPUT_BYTES}. */
  maxBytes?: number;
}

/**
 * 0-based offset of the first byte that is not part of a well-formed UTF-8 sequence, or -1.
 * Well-formed sequences per Unicode 15 table 3-7 (E0 A0–BF, ED 80–9F, F0 90–BF, F4 80–8F second bytes).
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  const n = bytes.length;
  let i = 0;
  const cont = (k: number, lo = 0x80, hi = 0xbf) => k < n && bytes[k]! >= lo && bytes[k]! <= hi;
  while (i < n) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
    } else if (b >= 0xc2 && b <= 0xdf) {
      if (!cont(i + 1)) return i;
      i += 2;
    } else if (b >= 0xe0 && b <= 0xef) {
      const lo = b === 0xe0 ? 0xa0 : 0x80;
      const hi = b === 0xed ? 0x9f : 0xbf;
      if (!cont(i + 1, lo, hi) || !cont(i + 2)) return i;
      i += 3;
    } else if (b >= 0xf0 && b <= 0xf4) {
      const lo = b === 0xf0 ? 0x90 : 0x80;
      const hi = b === 0xf4 ? 0x8f : 0xbf;
      if (!cont(i + 1, lo, hi) || !cont(i + 2) || !cont(i + 3)) return i;
      i += 4;
    } else {
      return i;
    }
  }
  return -1;
}

/** The cap in force: `maxBytes` when it is a positive safe integer, else the default. */
function capOf(options: JsonInputOptions): number {
  const m = options.maxBytes;
  return typeof m === 'number' && Number.isSafeInteger(m) && m > 0 ? m : DEFAULT_MAX_INPUT_BYTES;
}

/** The `input_too_large` error. */
function tooLarge(file: string, size: number, cap: number): LoretraceError {
  return new LoretraceError('input_too_large', `${file} is ${size} bytes, over the ${cap}-byte input limit; not read (set LORETRACE_MAX_INPUT_BYTES to raise it)`, { file, expected: `a JSON document of at most ${cap} bytes` }, 2);
}

/**
 * Parse JSON text (BOM ignored), refusing duplicate keys.
 * @throws LoretraceError `bad_json` (exit 2: reason, line and column), `json_too_deep` (exit 2: line, column
 *   and pointer where it nests deeper than {@link MAX_JSON_DEPTH}), `proto_key` / `unsafe_integer` /
 *   `non_finite_number` (exit 2: pointer, line; {@link lossyValueError}), `duplicate_key` (exit 2: pointer,
 *   the line of the first and of the second occurrence; `details.line` is the second).
 */
export function parseStrictJson(text: string, file: string, options: { shapeChecks?: boolean } = {}): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let value: unknown;
  try {
    value = JSON.parse(body) as unknown;
  } catch {
    const bad = jsonSyntaxError(body) ?? { offset: 0, reason: 'invalid JSON' };
    const { line, column } = lineColumnAt(body, bad.offset);
    throw new LoretraceError('bad_json', `${file} is not JSON: ${bad.reason} at line ${line}, column ${column}`, { file, line, expected: 'a JSON document' }, 2);
  }
  // `shapeChecks: false` — a caller that bounds depth and shape itself (the proxy's client messages, which
  // refuse deep tool arguments as a recorded TOOL_REFUSED) skips the depth and lossy-value checks.
  const shape = options.shapeChecks !== false;
  const deep = shape ? tooDeepError(body, file) : null;
  if (deep !== null) throw deep;
  const dup = duplicateKeyError(body, file);
  if (dup !== null) throw dup;
  const lossy = shape ? lossyValueError(body, file) : null;
  if (lossy !== null) throw lossy;
  return value;
}

/**
 * The error (exit 2) for JSON text holding a value JavaScript would not keep as written ({@link jsonLossyValue}),
 * or null: `proto_key` — a key named `__proto__`, refused rather than dropped or turned into a prototype;
 * `unsafe_integer` — an integer beyond ±(2^53 − 1), refused rather than rounded; `non_finite_number` — a number
 * beyond the largest double (`1e400`), refused rather than read as Infinity and written as `null`. Each names
 * `file`, the line, the pointer and the token.
 */
export function lossyValueError(body: string, file: string): LoretraceError | null {
  const bad = jsonLossyValue(body, { nonFinite: true, exact: true });
  if (bad === null) return null;
  const { line, column } = lineColumnAt(body, bad.offset);
  if (bad.kind === 'lossy_number') {
    const field = (bad.pointer.split('/').pop() ?? '').replace(/~1/g, '/').replace(/~0/g, '~');
    return Number(bad.token) === 0
      ? new LoretraceError('lossy_number', `${file} has the number ${bad.token.slice(0, 40)} at ${bad.pointer} (line ${line}, column ${column}), a non-zero number too small for a JSON reader, which reads it as 0; expected 0 written as 0, or a number of at least ±${Number.MIN_VALUE}`, {
        file, pointer: bad.pointer, line, expected: `0, or a number of magnitude at least ${Number.MIN_VALUE}`,
      }, 2)
      : new LoretraceError('lossy_number', `${file} has the number ${bad.token.slice(0, 40)} at ${bad.pointer} (line ${line}, column ${column}), which a JSON reader reads as the integer ${String(Number(bad.token))}; ${field} must be an integer, so expected an integer literal (digits only, no fraction or exponent)`, {
        file, pointer: bad.pointer, line, expected: 'an integer literal (digits only)',
      }, 2);
  }
  if (bad.kind === 'non_finite_number') {
    return new LoretraceError('non_finite_number', `${file} has the number ${bad.token.slice(0, 40)} at ${bad.pointer} (line ${line}, column ${column}), beyond the largest number a JSON reader keeps (±${Number.MAX_VALUE}); it would be read as ${Number(bad.token) > 0 ? 'Infinity' : '-Infinity'} and written back as null; expected a finite number`, {
      file, pointer: bad.pointer, line, expected: `a number between -${Number.MAX_VALUE} and ${Number.MAX_VALUE}`,
    }, 2);
  }
  if (bad.kind === 'proto_key') {
    return new LoretraceError('proto_key', `${file} has a key named __proto__ at ${bad.pointer} (line ${line}, column ${column}); JavaScript readers drop it or take it for the object's prototype, so it would be lost; expected no key named __proto__`, {
      file, pointer: bad.pointer, line, expected: 'no key named __proto__',
    }, 2);
  }
  return new LoretraceError('unsafe_integer', `${file} has the integer ${bad.token} at ${bad.pointer} (line ${line}, column ${column}), beyond ±${Number.MAX_SAFE_INTEGER} (2^53 − 1); it would be read rounded to ${String(Number(bad.token))}; expected an integer a JSON reader keeps exactly`, {
    file, pointer: bad.pointer, line, expected: `an integer between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}`,
  }, 2);
}

/**
 * The `json_too_deep` error (exit 2) of JSON text that nests deeper than {@link MAX_JSON_DEPTH} arrays and
 * objects, or null: the line and column where it opens level 257, and the pointer of that container
 * (shortened in the message, whole in `details.pointer`). `file` names the document (`the raw output`).
 */
export function tooDeepError(body: string, file: string): LoretraceError | null {
  const deep = jsonTooDeep(body);
  if (deep === null) return null;
  const { line, column } = lineColumnAt(body, deep.offset);
  return new LoretraceError('json_too_deep', `${file} nests deeper than ${MAX_JSON_DEPTH} arrays and objects at line ${line}, column ${column} (pointer ${shortPointer(deep.pointer)}); expected a document nested at most ${MAX_JSON_DEPTH} levels deep`, {
    file, pointer: deep.pointer, line, expected: `JSON nested at most ${MAX_JSON_DEPTH} levels deep`,
  }, 2);
}

/**
 * The `duplicate_key` error (exit 2) of JSON text already known to parse, or null when every key occurs
 * once per object: the pointer of the second occurrence, the 1-based lines of both
 * (`details.line` = the second, `details.data` = `{ first_line, second_line }`).
 */
export function duplicateKeyError(body: string, file: string): LoretraceError | null {
  const dup = jsonDuplicateKey(body);
  if (dup === null) return null;
  const first = lineColumnAt(body, dup.first_offset).line;
  const second = lineColumnAt(body, dup.offset).line;
  return new LoretraceError('duplicate_key', `${file} has the key ${dup.pointer} twice (line ${first} and line ${second}); JSON readers keep only the last value, so the document would not be applied as a reviewer reads it; expected each key once per object`, {
    file, pointer: dup.pointer, line: second, expected: 'each key once per object', data: { first_line: first, second_line: second },
  }, 2);
}

/**
 * Decode and parse the bytes of a JSON input document: size cap, strict UTF-8, BOM, JSON, duplicate keys
 * (module comment).
 * @throws LoretraceError `input_too_large`, `not_utf8` (byte offset in the message and `details.data.byte_offset`),
 *   `bad_json`, `duplicate_key` — all exit 2.
 */
export function decodeJsonDocument(bytes: Uint8Array, file: string, options: JsonInputOptions = {}): unknown {
  const cap = capOf(options);
  if (bytes.length > cap) throw tooLarge(file, bytes.length, cap);
  return parseStrictJson(decodeUtf8Strict(bytes, file), file);
}

/**
 * Bytes → text, refusing anything that is not well-formed UTF-8 (a BOM is kept for the JSON step to drop).
 * @throws LoretraceError `not_utf8` (exit 2): the first invalid byte, its value and 0-based byte offset
 *   (also in `details.data.byte_offset`).
 */
export function decodeUtf8Strict(bytes: Uint8Array, file: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    const at = firstInvalidUtf8(bytes);
    throw new LoretraceError('not_utf8', `${file} is not UTF-8: invalid byte 0x${(bytes[at] ?? 0).toString(16).padStart(2, '0')} at byte offset ${at}`, { file, expected: 'UTF-8 text', data: { byte_offset: at } }, 2);
  }
}

/**
 * Read and decode a JSON input file: opened once, `fstat` of the descriptor must be a regular file no
 * larger than the cap (checked before a byte is read), then {@link decodeJsonDocument}.
 *
 * @param path the file to read (absolute, or relative to the process cwd).
 * @param file the name used in messages (as the user gave it).
 * @throws LoretraceError `file_not_found` (exit 2: missing, a directory, not a regular file, unreadable),
 *   and the errors of {@link decodeJsonDocument}.
 */
export async function readJsonDocumentFile(path: string, file: string = path, options: JsonInputOptions = {}): Promise<unknown> {
  return decodeJsonDocument(await readInputBytes(path, file, options), file, options);
}

/**
 * The bytes of an input file, at most `maxBytes` of them: `fstat` before reading (a FIFO or device is never
 * read; a file over the cap is refused unread). Opened with O_NONBLOCK so a FIFO cannot block the open.
 * @throws LoretraceError `file_not_found` (exit 2), `input_too_large` (exit 2).
 */
export async function readInputBytes(path: string, file: string = path, options: JsonInputOptions = {}): Promise<Buffer> {
  const cap = capOf(options);
  const refuse = (why: string) => new LoretraceError('file_not_found', `cannot read ${file}: ${why}`, { file, expected: 'a readable JSON file' }, 2);
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(path, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw refuse(code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : (e as Error).message);
  }
  try {
    const st = await handle.stat();
    if (st.isDirectory()) throw refuse('is a directory');
    if (!st.isFile()) throw refuse('not a regular file');
    if (st.size > cap) throw tooLarge(file, st.size, cap);
    const buf = Buffer.alloc(st.size);
    let got = 0;
    while (got < st.size) {
      const { bytesRead } = await handle.read(buf, got, st.size - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return got === st.size ? buf : buf.subarray(0, got);
  } catch (e) {
    if (e instanceof LoretraceError) throw e;
    throw refuse((e as Error).message);
  } finally {
    await handle.close();
  }
}
