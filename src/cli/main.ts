/**
 * The `loretrace` command line: a thin shell over the library (src/index.ts).
 * Each command lives in src/cli/commands/<name>.ts and exports `register(program, ctx)`.
 */
import { Command, CommanderError } from 'commander';
import type { CliContext } from './context.js';
import { commandPath, escapeTerminalText, reportError } from './context.js';
import { LoretraceError } from '../errors.js';
import { register as registerIndex } from './commands/index-cmd.js';
import { register as registerSearch } from './commands/search.js';
import { register as registerShow } from './commands/show.js';
import { register as registerLinks } from './commands/links.js';
import { register as registerTraverse } from './commands/traverse.js';
import { register as registerValidate } from './commands/validate.js';
import { register as registerRetrieve } from './commands/retrieve.js';
import { register as registerVerifyTrace } from './commands/verify-trace.js';
import { register as registerServe } from './commands/serve.js';
import { register as registerLedger } from './commands/ledger.js';
import { register as registerCoverage } from './commands/coverage.js';
import { register as registerCapture } from './commands/capture.js';
import { register as registerLock } from './commands/lock.js';
import { register as registerKeygen } from './commands/keygen.js';

/**
 * commander's error text as the body of our one-line usage error: `error: unknown option '--kk'\n(Did you
 * mean --k?)` → `unknown option '--kk' (did you mean --k?)`; a trailing period is dropped.
 */
function commanderMessage(message: string): string {
  return message
    .replace(/^error: /, '')
    .replace(/\n\(Did you mean/g, ' (did you mean')
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\.$/, '');
}

/** Options for {@link main}; every field defaults to the real process. */
export interface MainOptions {
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
  isTTY?: boolean;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Standard input's bytes, read when a command asks for them (default: the process's stdin). */
  readStdin?: () => Promise<Uint8Array>;
}

/** Read the process's stdin to its end. */
async function processStdin(): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/**
 * Run the CLI with `argv` (without `node` and the script name) and resolve to the exit code:
 * 0 ok, 1 invalid input or failed checks, 2 usage error or an input that cannot be read (README "Exit
 * codes"). Never calls process.exit and never throws.
 */
export async function main(argv: string[], options: MainOptions = {}): Promise<number> {
  const stdout = options.stdout ?? ((t: string) => void process.stdout.write(t));
  const stderr = options.stderr ?? ((t: string) => void process.stderr.write(t));
  const ctx: CliContext = {
    // What a vault holds is printed, so no control or bidi character of it reaches the terminal raw.
    stdout: (t) => stdout(escapeTerminalText(t)),
    stderr: (t) => stderr(escapeTerminalText(t)),
    progress: stderr,
    isTTY: options.isTTY ?? Boolean(process.stderr.isTTY),
    env: options.env ?? process.env,
    cwd: options.cwd ?? process.cwd(),
    readStdin: options.readStdin ?? processStdin,
    exitCode: 0,
  };
  const program = new Command('loretrace')
    .description('Verifiable lore retrieval for Ghostlight responder packets')
    .version('0.1.0')
    // commander's own error line is replaced by ours (see the catch below); help still goes to writeOut/writeErr.
    .configureOutput({ writeOut: (s) => ctx.stdout(s), writeErr: (s) => ctx.stderr(s), outputError: () => {} });
  for (const register of [
    registerIndex, registerSearch, registerShow, registerLinks, registerTraverse, registerValidate,
    registerRetrieve, registerVerifyTrace, registerServe, registerLedger, registerCoverage, registerCapture, registerLock, registerKeygen,
  ]) {
    register(program, ctx);
  }
  // Every command (subcommands included) throws instead of exiting, and says which command failed.
  let failed: Command = program;
  const override = (cmd: Command): void => {
    cmd.exitOverride((err) => {
      failed = cmd;
      throw err;
    });
    cmd.commands.forEach(override);
  };
  override(program);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version') return 0;
      // Help shown because no (sub)command was given (`loretrace`, `loretrace ledger`): a usage error.
      if (e.code === 'commander.help') return e.exitCode === 0 ? 0 : 2;
      ctx.command = commandPath(failed);
      return reportError(ctx, new LoretraceError('usage', commanderMessage(e.message), {}, 2));
    }
    return reportError(ctx, e);
  }
  return ctx.exitCode;
}
