/**
 * Vault configuration: `loretrace.config.json` in the vault root, or a file named with `--config`.
 * Loaded, validated against a JSON Schema 2020-12 (ajv), and returned as a {@link VaultConfig}.
 * Every field is optional; the defaults are listed in docs/INDEX.md ("Configuration").
 */
import { stat } from 'node:fs/promises';
import { duplicateKeyError, readInputBytes } from '../contracts/json-input.js';
import { isAbsolute, join, resolve } from 'node:path';
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
 * (optional: absent ⇒ `{}` and `file: null`).
 *
 * @throws LoretraceError `config_not_found` (exit 2) — `configPath` does not exist.
 * @throws LoretraceError `bad_config` (exit 2) — unreadable file, invalid JSON, or a schema violation;
 *   the message names the file and the JSON pointer (RFC 6901) of the first problem and what was expected.
 */
export async function loadVaultConfig(vaultRoot: string, options: LoadVaultConfigOptions = {}): Promise<LoadedVaultConfig> {
  const explicit = options.configPath !== undefined;
  const file = explicit
    ? (isAbsolute(options.configPath!) ? options.configPath! : resolve(options.cwd ?? process.cwd(), options.configPath!))
    : join(vaultRoot, CONFIG_FILE_NAME);
  try {
    await stat(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      if (!explicit) return { config: {}, file: null };
      throw new LoretraceError('config_not_found', `config file not found: ${file}`, { file, expected: 'an existing JSON file' }, 2);
    }
  }
  let text: string;
  try {
    // The checked input reader: a FIFO or device named loretrace.config.json is refused on the open handle
    // (a plain read would block indexing forever); a config over the input cap is not read.
    text = (await readInputBytes(file, file)).toString('utf8');
  } catch (e) {
    const why = (e as Error).message.replace(/^cannot read [^:]*: /, '');
    throw new LoretraceError('bad_config', `cannot read config file ${file}: ${why}`, { file }, 2);
  }
  return { config: parseVaultConfig(text, file), file };
}

/**
 * Parse and validate config JSON text (`file` is only used in messages).
 * @throws LoretraceError `bad_config` (exit 2) naming `file` and the JSON pointer of the problem;
 *   `duplicate_key` (exit 2) when an object has a key twice.
 */
export function parseVaultConfig(text: string, file: string): VaultConfig {
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (e) {
    throw new LoretraceError('bad_config', `config file ${file} is not valid JSON: ${(e as Error).message}`, { file, pointer: '', expected: 'a JSON object' }, 2);
  }
  const dup = duplicateKeyError(text.replace(/^\uFEFF/, ''), `config file ${file}`);
  if (dup) throw dup;
  const validate = getValidator();
  if (!validate(value)) {
    const err = [...(validate.errors ?? [])].sort((a, b) => cmp(a.instancePath, b.instancePath))[0]!;
    const pointer = err.keyword === 'additionalProperties'
      ? `${err.instancePath}/${String((err.params as { additionalProperty: string }).additionalProperty)}`
      : err.instancePath;
    const expected = err.keyword === 'additionalProperties' ? 'no unknown keys' : String(err.message);
    throw new LoretraceError(
      'bad_config',
      `config file ${file} is invalid at ${pointer === '' ? '/' : pointer}: expected ${expected}`,
      { file, pointer, expected },
      2,
    );
  }
  const { $schema: _ignored, ...config } = value as VaultConfig & { $schema?: string };
  return config;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
