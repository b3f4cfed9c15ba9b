/**
 * `loretrace validate packet|capture|projected-context|capture-fragment <files...> [--lenient] [--root <dir>] [--json]`
 *
 * Thin shell over src/contracts/validate.ts: reads and parses every file first, with the one strict reader
 * every command uses (a file that cannot be read as a JSON document — missing, a directory, not UTF-8, not
 * JSON, a key twice — stops the run with its coded error, exit 2, as in every command: README "Exit codes"),
 * validates each, prints one line per error
 * (`file: pointer: [rule] message (expected …)`) and a summary with totals, or with `--json` the reports plus
 * totals. Exit 0 when every file is valid, 1 when any is invalid, 2 on usage errors.
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { LoretraceError } from '../../errors.js';
import { validateDocument } from '../../contracts/validate.js';
import { VALIDATION_RULES } from '../../contracts/rules.js';
import type { DocumentKind, ValidationIssue, ValidationReport } from '../../contracts/types.js';
import type { CliContext } from '../context.js';
import { action, plural, printJson } from '../context.js';
import { readJsonFile } from '../vault-options.js';

const KINDS: readonly DocumentKind[] = ['packet', 'capture', 'projected-context', 'capture-fragment'];

interface ValidateCliOptions {
  lenient?: boolean;
  root?: string;
  json?: boolean;
}

/** Totals of one `validate` run: every applicable rule id is listed in `errors_by_rule`, zeros included. */
export interface ValidateTotals {
  files: number;
  valid: number;
  invalid: number;
  errors: number;
  warnings: number;
  errors_by_rule: Record<string, number>;
}

function totalsOf(kind: DocumentKind, reports: ValidationReport[]): ValidateTotals {
  const byRule: Record<string, number> = {};
  for (const r of VALIDATION_RULES) if (r.kinds.includes(kind)) byRule[r.id] = 0;
  for (const rep of reports) for (const e of rep.errors) byRule[e.rule] = (byRule[e.rule] ?? 0) + 1;
  const sorted: Record<string, number> = {};
  for (const k of Object.keys(byRule).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) sorted[k] = byRule[k] as number;
  return {
    files: reports.length,
    valid: reports.filter((r) => r.valid).length,
    invalid: reports.filter((r) => !r.valid).length,
    errors: reports.reduce((n, r) => n + r.errors.length, 0),
    warnings: reports.reduce((n, r) => n + r.warnings.length, 0),
    errors_by_rule: sorted,
  };
}

function line(file: string, i: ValidationIssue, warning = false): string {
  const exp = i.expected !== undefined ? ` (expected ${i.expected})` : '';
  return `${file}: ${i.pointer === '' ? '/' : i.pointer}: [${i.rule}] ${i.message}${exp}${warning ? ' [warning]' : ''}\n`;
}

/** The document kind each Ghostlight `schema_version` tag belongs to (the `const` of schemas/*.schema.json). */
const KIND_OF_SCHEMA_VERSION: Readonly<Record<string, DocumentKind>> = {
  'ghostlight.responder_packet.v0': 'packet',
  'ghostlight.responder_output.v0': 'capture',
  'ghostlight.projected_local_context.v0': 'projected-context',
};

/**
 * A hint for a document validated as the wrong kind: its `schema_version` names another kind (a packet given
 * to `validate capture`), so its schema errors say only that it is not the asked kind. Null otherwise.
 */
export function wrongKindHint(kind: DocumentKind, value: unknown): string | null {
  const tag = (value as { schema_version?: unknown } | null)?.schema_version;
  const other = typeof tag === 'string' ? KIND_OF_SCHEMA_VERSION[tag] : undefined;
  return other !== undefined && other !== kind ? `its schema_version is ${tag}, a ${other}: did you mean 'loretrace validate ${other}'?` : null;
}

/** Register `loretrace validate` on `program`; output goes to `ctx` (see the file comment for behaviour and exit codes). */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('validate')
    .description('validate Ghostlight responder packets, output captures, projected local contexts, or loretrace capture fragments (schema + cross-field rules)')
    .argument('<kind>', 'packet | capture | projected-context | capture-fragment')
    .argument('<files...>', 'JSON files to validate')
    .option('--lenient', 'ignore unknown properties (reported as warnings), like Ghostlight\'s hand-written validators')
    .option('--root <dir>', 'check that repository-relative refs (coordinator_artifact_ref, packet_ref, ...) exist under <dir>')
    .option('--json', 'print { kind, reports, totals } as JSON')
    .action(
      action(ctx, async (kindArg: string, files: string[], opts: ValidateCliOptions) => {
        if (!(KINDS as readonly string[]).includes(kindArg)) {
          throw new LoretraceError('usage', `unknown document kind "${kindArg}" (expected packet, capture, projected-context or capture-fragment)`, { expected: KINDS.join(', ') }, 2);
        }
        const kind = kindArg as DocumentKind;
        let root: string | undefined;
        if (opts.root !== undefined) {
          root = resolve(ctx.cwd, opts.root);
          let isDir = false;
          try {
            isDir = statSync(root).isDirectory();
          } catch {
            isDir = false;
          }
          if (!isDir) throw new LoretraceError('usage', `--root ${opts.root} is not a directory`, { file: opts.root, expected: 'an existing directory' }, 2);
        }
        const docs: { file: string; value: unknown }[] = [];
        for (const file of files) docs.push({ file, value: await readJsonFile(ctx, file, kind) });
        const reports = docs.map(({ file, value }) => validateDocument(kind, value, { file, lenient: opts.lenient === true, ...(root !== undefined ? { root } : {}) }));
        const totals = totalsOf(kind, reports);
        if (opts.json) {
          printJson(ctx, { kind, reports, totals });
        } else {
          reports.forEach((r, n) => {
            if (r.valid) ctx.stdout(`${r.file}: ok\n`);
            const hint = r.valid ? null : wrongKindHint(kind, docs[n]!.value);
            if (hint !== null) ctx.stdout(`${r.file}: hint: ${hint}\n`);
            for (const e of r.errors) ctx.stdout(line(r.file, e));
            for (const w of r.warnings) ctx.stdout(line(r.file, w, true));
          });
          const rules = Object.entries(totals.errors_by_rule).filter(([, n]) => n > 0);
          const byRule = rules.length ? ` (${rules.map(([id, n]) => `${id}: ${n}`).join(', ')})` : '';
          ctx.stdout(`${plural(totals.files, kind)}: ${totals.valid} valid, ${totals.invalid} invalid; ${plural(totals.errors, 'error')}${byRule}; ${plural(totals.warnings, 'warning')}\n`);
        }
        return totals.invalid > 0 ? 1 : 0;
      }),
    );
}
