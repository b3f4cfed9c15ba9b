/**
 * Argument parsing shared by the repository's scripts (`npm run bench`, `npm run eval`), on commander
 * (already a dependency: the loretrace CLI uses it). One place decides how a script reads its options,
 * prints its help and reports a usage error: `<script>: <message>` and the help on stderr, exit 2 — the
 * exit code both scripts document (docs/PERFORMANCE.md, docs/EVAL.md).
 */
import { Command, InvalidArgumentError, Option } from 'commander';

/**
 * One option of a script.
 * @typedef {object} ScriptOption
 * @property {string} flags       commander flags, e.g. `--scale <list>` or `--keep`
 * @property {string} description one line for the help text
 * @property {unknown} [value]    default value (shown in the help as `shown`, else as JSON)
 * @property {string} [shown]     how the help shows the default (e.g. `dist` for an absolute path)
 * @property {(text: string, previous: unknown) => unknown} [parse] value parser; throws InvalidArgumentError
 */

/**
 * A parsed command line: `opts` keyed by commander's camelCase names (`--phase-budget` → `phaseBudget`),
 * `fail(message)` for checks made after parsing (same form as commander's own errors).
 * @typedef {{ opts: Record<string, any>, fail: (message: string) => never, help: string }} ScriptArgs
 */

/**
 * Parse `argv` (default: `process.argv`) for the script `name`. `-h/--help` prints the help on stdout and
 * exits 0; an unknown option, a missing or invalid value prints `<name>: <message>` and the help on
 * stderr and exits 2. No positional arguments are accepted.
 * @param {string} name        the script's name in messages (`bench`, `eval`)
 * @param {string} usage       the first help line, e.g. `node scripts/bench.mjs [options]`
 * @param {ScriptOption[]} options
 * @param {string[]} [argv]
 * @returns {ScriptArgs}
 */
export function parseScriptArgs(name, usage, options, argv = process.argv) {
  const program = new Command(name)
    .usage(usage.replace(/^\S+\s+\S+\s*/, ''))
    .helpOption('-h, --help', 'show this help')
    .allowExcessArguments(false)
    .exitOverride()
    .configureOutput({
      // Help and errors are printed below, in the scripts' documented form.
      writeOut: () => {},
      writeErr: () => {},
      outputError: () => {},
    });
  program.name(usage.split(' [')[0]);
  for (const o of options) {
    const option = new Option(o.flags, o.description);
    // A switch that is off by default shows no default.
    if (o.value !== undefined && o.value !== false) option.default(o.value, o.shown);
    if (o.parse) option.argParser(o.parse);
    program.addOption(option);
  }
  const help = program.helpInformation().trimEnd();
  const fail = (message) => {
    process.stderr.write(`${name}: ${message}\n${help}\n`);
    process.exit(2);
  };
  try {
    program.parse(argv);
  } catch (e) {
    if (e && e.code === 'commander.helpDisplayed') {
      process.stdout.write(help + '\n');
      process.exit(0);
    }
    fail(String(e?.message ?? e).replace(/^error: /, ''));
  }
  return { opts: program.opts(), fail, help };
}

/**
 * Parser of an integer ≥ `min` (default 1): the value as a number, or InvalidArgumentError naming what
 * was expected (commander adds the option and the value).
 * @param {number} [min]
 * @returns {(text: string) => number}
 */
export function integerAtLeast(min = 1) {
  return (text) => {
    const n = Number(text);
    if (text.trim() === '' || !Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`must be an integer ≥ ${min}`);
    return n;
  };
}

/**
 * Parser of any safe integer (a seed).
 * @param {string} text
 * @returns {number}
 */
export function integer(text) {
  const n = Number(text);
  if (text.trim() === '' || !Number.isSafeInteger(n)) throw new InvalidArgumentError('must be an integer');
  return n;
}

/**
 * Parser of a comma-separated list; each item trimmed and passed to `item` (identity by default),
 * empty items dropped.
 * @template T
 * @param {(text: string) => T} [item]
 * @returns {(text: string) => T[]}
 */
export function commaList(item = (s) => /** @type {any} */ (s)) {
  return (text) => text.split(',').map((s) => s.trim()).filter(Boolean).map(item);
}

/**
 * Parser of one of `choices`.
 * @param {string[]} choices
 * @returns {(text: string) => string}
 */
export function oneOf(choices) {
  return (text) => {
    if (!choices.includes(text)) throw new InvalidArgumentError(`must be ${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}`);
    return text;
  };
}
