/** `loretrace search` — not yet implemented (owned by its issue). */
import type { Command } from 'commander';
import type { CliContext } from '../context.js';

export function register(_program: Command, _ctx: CliContext): void {
  // placeholder: the owning issue registers the command here.
}
