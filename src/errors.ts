/**
 * Errors and findings.
 *
 * Two kinds of bad news, kept apart (house style, after minisearch's `logger(level, message, code)`):
 *
 * - {@link LoretraceError} is *fatal* for the call that raised it: bad options, a missing vault, a
 *   policy that does not compile. Library code throws it; it never exits the process. The CLI turns it
 *   into one line on stderr (`loretrace: <message>`) and an exit code — never a stack trace.
 * - {@link Finding} is a coded, machine-readable record of something worth reporting that does not stop
 *   the work: an unresolved wikilink, a skipped binary file, an advisory policy clause.
 *
 * Every message names the file, the line or JSON pointer, and what was expected.
 */

/** Severity of a {@link Finding}. `error` findings make `--json` commands exit 1; the others do not. */
export type FindingSeverity = 'error' | 'warning' | 'info';

/**
 * A coded, non-fatal record.
 *
 * - `code`: stable snake_case identifier (for example `unresolved_link`, `not_utf8`, `file_too_large`).
 * - `path`: vault-relative POSIX path of the file concerned, when there is one.
 * - `line` / `column`: 1-based position in the original file (lines split at CRLF, CR or LF).
 * - `pointer`: RFC 6901 JSON pointer, for findings about JSON inputs.
 */
export interface Finding {
  code: string;
  severity: FindingSeverity;
  message: string;
  path?: string;
  line?: number;
  column?: number;
  pointer?: string;
}

/** Extra, structured context carried by a {@link LoretraceError}. */
export interface ErrorDetails {
  /** File the error is about (as the user wrote it, or vault-relative). */
  file?: string;
  /** RFC 6901 JSON pointer inside that file. */
  pointer?: string;
  /** 1-based line inside that file. */
  line?: number;
  /** What was expected, in words. */
  expected?: string;
  /** Any further machine-readable data (for example the list of missing seeds). */
  data?: Record<string, unknown>;
}

/**
 * The one exception type the library throws on purpose.
 *
 * `code` is a stable snake_case identifier listed in docs/ERRORS.md (for example `vault_not_found`,
 * `bad_ref`, `seed_not_found`, `bad_policy`, `usage`). `message` is a complete sentence that starts with
 * `loretrace:` is *not* included — the CLI adds that prefix.
 *
 * `exitCode` is the CLI exit code the error maps to, by the problem and never by the command (README
 * "Exit codes"): 2 when nothing could be done — a usage error, a file that cannot be read as a document
 * (missing, not UTF-8, not JSON, …), an option file that is not what its option takes, an output that would
 * be overwritten; 1 when the command ran and the answer is no — a document of the wrong shape, a failed
 * check, a ref that names nothing.
 */
export class LoretraceError extends Error {
  readonly code: string;
  readonly details: ErrorDetails;
  readonly exitCode: 1 | 2;

  constructor(code: string, message: string, details: ErrorDetails = {}, exitCode: 1 | 2 = 1) {
    super(message);
    this.name = 'LoretraceError';
    this.code = code;
    this.details = details;
    this.exitCode = exitCode;
  }

  /** A plain JSON form: `{ code, message, file?, pointer?, line?, expected?, data? }`. */
  toJSON(): Record<string, unknown> {
    return { code: this.code, message: this.message, ...this.details };
  }
}

/** True when `e` is a {@link LoretraceError} (works across module copies by checking the name). */
export function isLoretraceError(e: unknown): e is LoretraceError {
  return e instanceof LoretraceError || (e instanceof Error && e.name === 'LoretraceError' && 'code' in e);
}
