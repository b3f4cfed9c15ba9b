/**
 * The strict JSON reading of what a proxy client sends — an HTTP request body, a stdio JSON-RPC frame — with
 * the reader the project uses for packets and policies (src/contracts/json-input.ts): strict UTF-8 (an invalid
 * byte is refused, never turned into U+FFFD), `JSON.parse`, and no duplicate key anywhere (`JSON.parse` keeps
 * the last value, so `{"ref":"A.md","ref":"B.md"}` would read B while the ledger's `arguments`, a reviewer or
 * another JSON reader may show A). A leading byte-order mark is ignored, as for every JSON input.
 *
 * The message is one line meant for the client: it names what was wrong and where (line and column, byte
 * offset, or the JSON pointer of the repeated key), and shows nothing of the input but that pointer, through
 * {@link shownInput} (escaped, at most 64 characters).
 */
import { isLoretraceError } from '../errors.js';
import { decodeUtf8Strict, parseStrictJson } from '../contracts/json-input.js';
import { jsonDuplicateKey, lineColumnAt } from '../contracts/rules.js';
import { INVISIBLE_CHARACTERS, shownInput } from '../proxy/refusals.js';

/** Why a client's JSON was refused: the code of the json-input error. */
export type StrictJsonProblem = 'not_utf8' | 'bad_json' | 'duplicate_key';

/** The outcome of {@link readClientJson}. */
export type ClientJson =
  | { ok: true; value: unknown }
  | { ok: false; problem: StrictJsonProblem; message: string };

/** `\u{XXXX}` for every invisible character of a parser message (it may quote one character of the input). */
function visible(text: string): string {
  return text.replace(INVISIBLE_CHARACTERS, (c) => `\\u{${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}}`);
}

/** The message of a repeated key: its pointer (escaped, cut short) and where both occurrences stand. */
function duplicateMessage(bytes: Uint8Array, what: string): string {
  const text = new TextDecoder('utf-8', { ignoreBOM: false }).decode(bytes);
  const dup = jsonDuplicateKey(text)!;
  const at = (offset: number) => {
    const { line, column } = lineColumnAt(text, offset);
    return `line ${line}, column ${column}`;
  };
  return `${what} has the key ${shownInput(dup.pointer)} twice (at ${at(dup.first_offset)} and ${at(dup.offset)}); JSON readers keep only the last value; expected each key once per object`;
}

/**
 * Decode and parse the bytes a client sent.
 * @param bytes the body or frame, exactly as received.
 * @param what  how the message names it: `the request body`, `the line`.
 * @returns the value, or the problem with a one-line message such as
 *   `the request body has the key "/ref" twice (at line 1, column 2 and line 1, column 14); JSON readers keep only the last value; expected each key once per object`,
 *   `the request body is not UTF-8: invalid byte 0xff at byte offset 9`,
 *   `the request body is not JSON: unexpected end of input at line 1, column 12`.
 *   Never throws for bad input.
 */
export function readClientJson(bytes: Uint8Array, what: string): ClientJson {
  try {
    // Depth and argument shape are the tools' to refuse (a recorded TOOL_REFUSED), not the transport's.
    return { ok: true, value: parseStrictJson(decodeUtf8Strict(bytes, what), what, { shapeChecks: false }) };
  } catch (e) {
    if (!isLoretraceError(e)) throw e;
    if (e.code === 'duplicate_key') return { ok: false, problem: 'duplicate_key', message: duplicateMessage(bytes, what) };
    if (e.code === 'not_utf8') return { ok: false, problem: 'not_utf8', message: e.message };
    return { ok: false, problem: 'bad_json', message: visible(e.message) };
  }
}
