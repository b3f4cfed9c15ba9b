/**
 * Vault configuration: `loretrace.config.json` in the vault root, or a file named with `--config`.
 * Loaded, validated against a JSON Schema 2020-12 (ajv), and returned as a {@link VaultConfig}.
 * Every field is optional; the defaults are listed in docs/INDEX.md ("Configuration").
 */
import { realpathSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { decodeUtf8Strict, parseStrictJson, readInputBytes } from '../contracts/json-input.js';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { ErrorObject } from 'ajv';
import { LoretraceError } from '../errors.js';
import type { VaultConfig } from '../types.js';

/** File name looked up in the vault root when no `--config` is given. */
export const CONFIG_FILE_NAME = 'loretrace.config.json';

/**
 * Default cap on the size of a note that is read and parsed: 8 MiB (bytes). Measured with
 * scripts/big-note.mjs (docs/PARSING.md, "Size cap, measured"): a cold index of one note costs about
 * 100 MiB of peak RSS per MB of ordinary lore (5 MB: 622 MiB, 16 MB: 1,594 MiB), so an 8 MiB note stays
 * under 1 GiB; larger ones are known but unparsed (`too_large`).
 */
export const DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024;

/** JSON Schema (2020-12) of `loretrace.config.json`. Unknown keys are rejected so typos surface. */
export const VAULT_CONFIG_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'https://loretrace.dev/schemas/vault-config.schema.json',
  title: 'loretrace vault configuration',
  type: 'object',
  additionalProperties: false,
  properties: {
    $schema: { type: 'string' },
    namespace: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' },
    include: { type: 'array', items: { type: 'string', minLength: 1 } },
    exclude: { type: 'array', items: { type: 'string', minLength: 1 } },
    max_file_bytes: { type: 'integer', minimum: 1 },
    chunk_word_budget: { type: 'integer', minimum: 1 },
    class_rules: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['glob', 'classes'],
        properties: {
          glob: { type: 'string', minLength: 1 },
          classes: { type: 'array', items: { type: 'string', minLength: 1 } },
        },
      },
    },
    future_era_prefixes: { type: 'array', items: { type: 'string' } },
    hidden_prefixes: { type: 'array', items: { type: 'string' } },
    link_class_synonyms: {
      type: 'object',
      additionalProperties: { type: 'array', items: { type: 'string', minLength: 1 } },
    },
    stem_weight: { type: 'number', minimum: 0, maximum: 1 },
    trusted_keys: { type: 'array', items: { type: 'string', minLength: 1 } },
  },
} as const;

let validator: ValidateFunction | undefined;

function getValidator(): ValidateFunction {
  if (!validator) {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    validator = ajv.compile(VAULT_CONFIG_SCHEMA);
  }
  return validator as ValidateFunction;
}

/** Options of {@link loadVaultConfig}. */
export interface LoadVaultConfigOptions {
  /** Explicit config file (`--config`), absolute or relative to `cwd`. When given, it must exist. */
  configPath?: string;
  /** Directory relative `configPath` is resolved against; default `process.cwd()`. */
  cwd?: string;
}

/**
 * Where a loaded config came from: `file` (absolute path) and `inside_vault`, true for the vault's own
 * `loretrace.config.json` and for a `--config` file that lies inside the vault (symbolic links resolved).
 * The vault never vouches for itself (docs/RECEIPTS.md "Authorship", docs/PROXY.md threat model: whoever can
 * write the lore can plant a config): a config inside the vault may strengthen the policy but never weaken it
 * (src/policy/compile.ts `compileFutureEra`: its `future_era_prefixes` add to the default, never replace it).
 */
export interface ConfigOrigin {
  file: string;
  inside_vault: boolean;
}

/** The origin of each config object {@link loadVaultConfig} returned (a config built in code has none). */
const origins = new WeakMap<VaultConfig, ConfigOrigin>();

/** Where `config` was read from, or undefined for a config object a caller built itself (tests, library callers). */
export function configOrigin(config: VaultConfig): ConfigOrigin | undefined {
  return origins.get(config);
}

/** Give `to` (a copy of `from` with options applied) the origin of `from`; returns `to`. */
export function withConfigOrigin(to: VaultConfig, from: VaultConfig): VaultConfig {
  const o = origins.get(from);
  if (o !== undefined) origins.set(to, o);
  return to;
}

/**
 * True when `path` is `folder` or lies below it (both absolute; symbolic links resolved where they exist, so a
 * symlinked vault or a link into it counts as inside). Used so that the vault never vouches for itself: trust
 * keys and policy-weakening settings found inside it are not taken.
 */
export function isInsideFolder(path: string, folder: string): boolean {
  const real = (p: string): string => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  };
  const rel = relative(real(folder), real(path));
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * The one-line warning for a config inside the vault that lists `future_era_prefixes` — in a config outside
 * the vault they replace the default "every Post-Elysium/ folder", so here they would switch the rule off for
 * every packet; inside the vault they are only added to it. Null for any other config.
 */
export function inVaultPolicyWarning(config: VaultConfig): string | null {
  const o = origins.get(config);
  if (o === undefined || !o.inside_vault || !config.future_era_prefixes || config.future_era_prefixes.length === 0) return null;
  return `loretrace: warning: ${o.file} /future_era_prefixes: a config inside the vault only adds future-era prefixes, it never replaces the default (every Post-Elysium/ folder still applies); to replace it, pass --config <file> outside the vault`;
}

/** What {@link loadVaultConfig} returns. */
export interface LoadedVaultConfig {
  config: VaultConfig;
  /** Absolute path of the file read, or null when none was found (defaults apply). */
  file: string | null;
}

/**
 * Load and validate the vault configuration.
 *
 * Looks for `configPath` when given (it must exist), else `<vaultRoot>/loretrace.config.json`
 * (optional: absent ⇒ `{}` and `file: null`). The config returned carries its {@link ConfigOrigin}
 * ({@link configOrigin}): whether it lies inside the vault decides which policy settings it may weaken.
 *
 * @throws LoretraceError `config_not_found` (exit 2) — `configPath` does not exist.
 * @throws LoretraceError `vault_not_a_directory` (exit 2) — no `configPath` and `vaultRoot` is a file, a FIFO or
 *   anything else that is not a directory (as `vaultRoot` in src/vault/scan.ts says it).
 * @throws LoretraceError `bad_config` (exit 2) — an unreadable file, or schema violations (each pointer
 *   (RFC 6901) and what was expected); `not_utf8`, `bad_json`, `duplicate_key` (exit 2) from the strict JSON
 *   reader, naming `config file <file>`.
 */
export async function loadVaultConfig(vaultRoot: string, options: LoadVaultConfigOptions = {}): Promise<LoadedVaultConfig> {
  const explicit = options.configPath !== undefined;
  const file = explicit
    ? (isAbsolute(options.configPath!) ? options.configPath! : resolve(options.cwd ?? process.cwd(), options.configPath!))
    : join(vaultRoot, CONFIG_FILE_NAME);
  try {
    await stat(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      if (!explicit) return { config: {}, file: null };
      throw new LoretraceError('config_not_found', `config file not found: ${file}`, { file, expected: 'an existing JSON file' }, 2);
    }
    // `<vault>/loretrace.config.json` under a vault path that is a file (or a FIFO): the problem is the vault
    // path the user named, answered as the vault scan answers it — not a system error about a config file
    // the user never named.
    if (code === 'ENOTDIR' && !explicit) {
      throw new LoretraceError('vault_not_a_directory', `vault path is not a directory: ${vaultRoot}`, { file: vaultRoot, expected: 'a directory of markdown notes' }, 2);
    }
  }
  let bytes: Buffer;
  try {
    // The checked input reader: a FIFO or device named loretrace.config.json is refused on the open handle
    // (a plain read would block indexing forever); a config over the input cap is not read.
    bytes = await readInputBytes(file, file);
  } catch (e) {
    const why = (e as Error).message.replace(/^cannot read [^:]*: /, '');
    throw new LoretraceError('bad_config', `cannot read config file ${file}: ${why}`, { file }, 2);
  }
  // Strict UTF-8 like every other JSON input (src/contracts/json-input.ts): a bad byte is `not_utf8` with its
  // offset, never a U+FFFD that JSON.parse then reports as an unexpected token.
  const config = parseVaultConfig(decodeUtf8Strict(bytes, `config file ${file}`), file);
  origins.set(config, { file, inside_vault: !explicit || isInsideFolder(file, vaultRoot) });
  return { config, file };
}

/**
 * Parse and validate config JSON text (`file` is only used in messages) with the one strict JSON reader
 * (`parseStrictJson`, src/contracts/json-input.ts: BOM ignored, syntax errors by line and column, no
 * duplicate keys), then the schema, every problem reported at once.
 * @throws LoretraceError `bad_json` (exit 2: reason, line, column), `duplicate_key` (exit 2: pointer and both
 *   lines), `bad_config` (exit 2) listing each schema problem as `<pointer>: expected <what>` sorted by
 *   pointer (`details.pointer` is the first; `details.data.problems` all of them).
 */
export function parseVaultConfig(text: string, file: string): VaultConfig {
  const value = parseStrictJson(text, `config file ${file}`);
  const validate = getValidator();
  if (!validate(value)) {
    const problems = configProblems(validate.errors ?? []);
    const first = problems[0]!;
    const listed = problems.map((p) => `${p.pointer === '' ? '/' : p.pointer}: expected ${p.expected}`).join('; ');
    throw new LoretraceError(
      'bad_config',
      `config file ${file} is invalid ${problems.length === 1 ? 'at ' : `(${problems.length} problems) at `}${listed}`,
      { file, pointer: first.pointer, expected: first.expected, data: { problems } },
      2,
    );
  }
  const { $schema: _ignored, ...config } = value as VaultConfig & { $schema?: string };
  return config;
}

/** One schema problem of a config: where (RFC 6901 pointer, '' = the document) and what was expected, in words. */
interface ConfigProblem {
  pointer: string;
  expected: string;
}

/**
 * ajv's errors as {@link ConfigProblem}s, one per pointer and expectation, sorted by pointer: an unknown key
 * is reported at its own pointer; ajv's `if`/`anyOf` bookkeeping errors are not problems of their own.
 */
function configProblems(errors: readonly ErrorObject[]): ConfigProblem[] {
  const seen = new Set<string>();
  const out: ConfigProblem[] = [];
  for (const e of errors) {
    const unknown = e.keyword === 'additionalProperties' ? String((e.params as { additionalProperty: string }).additionalProperty) : null;
    const pointer = unknown === null ? e.instancePath : `${e.instancePath}/${unknown.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    const expected = unknown === null ? expectedOf(e) : `no key ${JSON.stringify(unknown)} (unknown${e.instancePath === '' ? `; known keys: ${Object.keys(VAULT_CONFIG_SCHEMA.properties).join(', ')}` : ''})`;
    const key = `${pointer}\u0000${expected}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ pointer, expected });
  }
  return out.sort((a, b) => cmp(a.pointer, b.pointer) || cmp(a.expected, b.expected));
}

/** What a schema keyword asked for, in words: "an object", "an integer >= 1", "a string matching …". */
function expectedOf(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'type': {
      const t = String(p.type);
      return t === 'object' ? 'an object' : t === 'array' ? 'an array' : t === 'integer' ? 'an integer' : `a ${t}`;
    }
    case 'minimum': return `a number >= ${String(p.limit)}`;
    case 'maximum': return `a number <= ${String(p.limit)}`;
    case 'minLength': return 'a non-empty string';
    case 'pattern': return `a string matching ${String(p.pattern)}`;
    case 'required': return `the key ${JSON.stringify(String(p.missingProperty))}`;
    default: return String(e.message);
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
