/**
 * What every CLI command gets: where to write, whether stdout is a terminal, and one way to turn
 * library errors into exit codes. Commands only parse arguments, call the library, print and return
 * an exit code (0 ok, 1 findings/invalid, 2 usage error). Only bin/loretrace.js touches process.exitCode.
 */
import { Command } from 'commander';
import { isLoretraceError } from '../errors.js';

/** Output sinks and environment for one CLI run (tests pass in-memory sinks). */
export interface CliContext {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** True when stdout/stderr is an interactive terminal (progress bars only then). */
  isTTY: boolean;
  /** Environment variables (LORETRACE_INDEX_DIR, ...). */
  env: NodeJS.ProcessEnv;
  /**
   * Where a progress bar writes (text with ANSI cursor codes, unescaped): the raw stderr. Absent: `stderr`.
   * Everything else goes through `stdout` / `stderr`, which {@link escapeTerminalText} the text first.
   */
  progress?: (text: string) => void;
  /** Working directory relative paths are resolved against. */
  cwd: string;
  /** Read standard input to its end (`capture --raw-output -`); tests pass their own bytes. */
  readStdin: () => Promise<Uint8Array>;
  /** Set by a command's action: the exit code of this run. */
  exitCode: number;
  /**
   * The command being run as typed after `loretrace` (`search`, `ledger verify`; `''` for the program
   * itself), set by {@link action} and by `main` for commander's errors. Usage errors point at
   * `loretrace <command> --help`.
   */
  command?: string;
}

/**
 * Characters a vault could use to spoof a terminal line: C0 controls except line feed and tab (escape
 * sequences, carriage return, backspace), DEL and C1 controls (U+0080–U+009F), and the bidi embedding,
 * override and isolate controls U+202A–U+202E, U+2066–U+2069 (Unicode TR #9; "Trojan Source",
 * CVE-2021-42574).
 */
const TERMINAL_UNSAFE = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/gu;

/**
 * Text as the CLI prints it: every {@link TERMINAL_UNSAFE} character written as a visible `\uXXXX` (upper-case
 * hex, four digits), so a path, title or line of a vault cannot move the cursor, recolour or reorder what a
 * terminal shows. The same escape is JSON's for that character, so `--json` output (which goes through it
 * too) parses to the same value. Everything else is unchanged; `\n` and `\t` stay.
 */
export function escapeTerminalText(text: string): string {
  return text.replace(TERMINAL_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);
}

/** A command's name as typed after `loretrace`: `search`, `ledger verify`, or `''` for the program. */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** The pointer a usage error ends with: `; see 'loretrace search --help'`. */
export function usageHint(command: string | undefined): string {
  return `; see 'loretrace${command ? ` ${command}` : ''} --help'`;
}

/** `1 note`, `2 notes`; `many` for irregular plurals (`plural(n, 'entry', 'entries')`). */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * Wrap a command action: records the command in `ctx.command` (commander passes the Command as the
 * action's last argument), runs it, stores its returned exit code in `ctx.exitCode`, and converts a
 * thrown LoretraceError into `loretrace: <message>` on stderr (exit 2 for usage errors, else 1).
 * Any other exception is a bug: it is reported in one line with a request to file an issue, never as
 * a stack trace (set LORETRACE_DEBUG=1 to see the stack).
 */
export function action<A extends unknown[]>(ctx: CliContext, fn: (...args: A) => Promise<number> | number) {
  return async (...args: A): Promise<void> => {
    const last = args[args.length - 1];
    if (last instanceof Command) ctx.command = commandPath(last);
    try {
      ctx.exitCode = await fn(...args);
    } catch (e) {
      ctx.exitCode = reportError(ctx, e);
    }
  };
}

/**
 * Where an error points, as the CLI appends it to the message: ` (<file>, pointer <p>, line <n>)`, or `''`
 * when the error names no file or its message already names it. Takes the details of a `LoretraceError` or
 * of its `toJSON()` record (a batch summary's `error`), so a batch line names the file as a single run does.
 */
export function errorWhere(message: string, details: { file?: unknown; pointer?: unknown; line?: unknown }): string {
  const file = typeof details.file === 'string' ? details.file : undefined;
  const where = [file, details.pointer ? `pointer ${String(details.pointer)}` : undefined, details.line ? `line ${String(details.line)}` : undefined]
    .filter(Boolean)
    .join(', ');
  return where && !message.includes(file ?? '\u0000') ? ` (${where})` : '';
}

/**
 * Print an error the CLI way and return its exit code: one line
 * `loretrace: <message> (<file>, pointer <p>, line <n>) [<code>]`; a `usage` error also points at the
 * command's help (`loretrace: <message>; see 'loretrace <command> --help' [usage]`).
 */
export function reportError(ctx: CliContext, e: unknown): number {
  if (isLoretraceError(e)) {
    const hint = e.code === 'usage' ? usageHint(ctx.command) : '';
    ctx.stderr(`loretrace: ${e.message}${errorWhere(e.message, e.details)}${hint} [${e.code}]\n`);
    return e.exitCode;
  }
  const msg = e instanceof Error ? e.message : String(e);
  ctx.stderr(`loretrace: internal error: ${msg} (this is a bug; please report it)\n`);
  if (ctx.env.LORETRACE_DEBUG && e instanceof Error && e.stack) ctx.stderr(e.stack + '\n');
  return 1;
}

/** Write a JSON value the way every `--json` output is written: 2-space indent, trailing newline. */
export function printJson(ctx: CliContext, value: unknown): void {
  ctx.stdout(JSON.stringify(value, null, 2) + '\n');
}
