/**
 * Every JSON Schema of loretrace, loaded from the package's `schemas/` folder and compiled once with ajv
 * (JSON Schema 2020-12 dialect, ajv-formats, `allErrors`, `strict: true`, `verbose: true` so errors carry the
 * offending value) in ONE Ajv instance, so cross-file `$ref`s resolve. Compiled validators are cached per process.
 *
 * - The contract schemas (responder packet, responder output capture, projected local context) and loretrace's
 *   capture fragment are the {@link DocumentKind}s `loretrace validate` checks.
 * - loretrace's own outputs — traverse result, policy receipt, index manifest, proxy ledger record, coverage
 *   report, capture fragment — each carry a `schema_version` and are reachable through {@link outputSchema}.
 *
 * Two variants of each document-kind schema exist: `strict` (the files as written: unknown properties are errors,
 * exactly like Ghostlight's JSON Schemas) and `lenient` (the same files with every `additionalProperties: false`
 * removed, which is how Ghostlight's hand-written Python validators treat unknown fields).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import formatsModule from 'ajv-formats';
import { LoretraceError } from '../errors.js';
import type { DocumentKind } from './types.js';

/** Base URL of loretrace's schema `$id`s. */
export const SCHEMA_BASE = 'https://loretrace.dev/schemas/';

/** Schema file (in `schemas/`) of each document kind. */
export const SCHEMA_FILES: Readonly<Record<DocumentKind, string>> = {
  packet: 'responder-packet.schema.json',
  capture: 'responder-output.schema.json',
  'projected-context': 'projected-local-context.schema.json',
  'capture-fragment': 'capture-fragment.schema.json',
};

/** loretrace's own output documents, each with a `schema_version`. */
export type OutputSchemaName = 'traverse_result' | 'policy_receipt' | 'capture_fragment' | 'index_manifest' | 'ledger_record' | 'coverage_report' | 'lock' | 'retrieve_batch';

/**
 * Schema file (in `schemas/`) of each loretrace output: `traverse_result` (`loretrace traverse --json`),
 * `policy_receipt` (`traverse --receipt-only --json`; `$defs/rows` is the embedded `policy_receipt` array),
 * `capture_fragment` (`retrieve --capture-out`, `ledger export`), `index_manifest` (`<index-dir>/index.json`),
 * `ledger_record` (one line of a proxy ledger), `coverage_report` (`coverage.json`), `lock` (`<name>.lock.json`
 * beside the outputs of `retrieve`, `capture` and `ledger export`), `retrieve_batch` (the summary of
 * `retrieve --batch --json`, `retrieveBatch`).
 */
export const OUTPUT_SCHEMA_FILES: Readonly<Record<OutputSchemaName, string>> = {
  traverse_result: 'traverse-result.schema.json',
  policy_receipt: 'policy-receipt.schema.json',
  capture_fragment: 'capture-fragment.schema.json',
  index_manifest: 'index-manifest.schema.json',
  ledger_record: 'ledger-record.schema.json',
  coverage_report: 'coverage-report.schema.json',
  lock: 'lock.schema.json',
  retrieve_batch: 'retrieve-batch.schema.json',
};

/**
 * Options of every loretrace Ajv instance. `strict: true` except `strictRequired`, which would refuse a `required`
 * under `not` (ledger-record.schema.json forbids a field that way: "a session record has no `tool`"); that is
 * valid JSON Schema, and the lint has no effect on how documents are validated.
 */
const AJV_OPTIONS = { allErrors: true, strict: true, strictRequired: false, verbose: true } as const;

/** Every schema file the shared Ajv instance holds (document kinds first, then outputs; no duplicates). */
const ALL_SCHEMA_FILES: readonly string[] = [...new Set([...Object.values(SCHEMA_FILES), ...Object.values(OUTPUT_SCHEMA_FILES)])];

/** Absolute path of the package's `schemas/` folder (two levels up from src/packet and dist/packet). */
export const SCHEMAS_DIR = fileURLToPath(new URL('../../schemas/', import.meta.url));

// ajv-formats is CommonJS: under NodeNext its default import is `module.exports`, whose `.default` is the plugin.
const addFormats = formatsModule.default;

const rawCache = new Map<string, Record<string, unknown>>();

/**
 * The parsed JSON Schema of a contract kind, read from `schemas/` on first use.
 * Throws `LoretraceError('schema_missing')` when the file is absent or not JSON (a broken install).
 */
export function loadSchema(kind: DocumentKind): Record<string, unknown> {
  return loadSchemaFile(SCHEMA_FILES[kind]);
}

/** The parsed schema file `file` of `schemas/` (cached). Throws `schema_missing` like {@link loadSchema}. */
function loadSchemaFile(file: string): Record<string, unknown> {
  const cached = rawCache.get(file);
  if (cached) return cached;
  const path = SCHEMAS_DIR + file;
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new LoretraceError('schema_missing', `cannot load schema ${path}: ${(e as Error).message}`, { file: path, expected: 'the JSON Schema shipped in the package schemas/ folder' });
  }
  rawCache.set(file, parsed);
  return parsed;
}

/**
 * A fresh Ajv2020 instance (ajv-formats, `allErrors`, `strict: true` but `strictRequired: false`, `verbose: true`) with every loretrace schema
 * (the contract schemas, the capture fragment and the output schemas of {@link OUTPUT_SCHEMA_FILES}) added under
 * their `$id`s, so other schemas can `$ref` them — for example
 * `https://loretrace.dev/schemas/responder-output.schema.json#/$defs/research_trace_entry`.
 */
export function createAjv(): Ajv2020 {
  const ajv = new Ajv2020(AJV_OPTIONS);
  addFormats(ajv);
  for (const file of ALL_SCHEMA_FILES) ajv.addSchema(loadSchemaFile(file));
  return ajv;
}

/**
 * Deep copy of `schema` without any `additionalProperties: false`, under a `lenient/` `$id`; absolute `$ref`s to
 * other loretrace schemas point at their lenient copies too.
 */
function lenientCopy(schema: Record<string, unknown>): Record<string, unknown> {
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(strip);
    if (node && typeof node === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(node)) {
        if (k === 'additionalProperties' && v === false) continue;
        out[k] = k === '$ref' && typeof v === 'string' && v.startsWith(SCHEMA_BASE) ? v.replace(SCHEMA_BASE, `${SCHEMA_BASE}lenient/`) : strip(v);
      }
      return out;
    }
    return node;
  };
  const copy = strip(schema) as Record<string, unknown>;
  copy.$id = String(schema.$id).replace(SCHEMA_BASE, `${SCHEMA_BASE}lenient/`);
  return copy;
}

let strictAjv: Ajv2020 | undefined;
let lenientAjv: Ajv2020 | undefined;
const compiled = new Map<string, ValidateFunction>();

/**
 * The compiled (cached) ajv validator of a kind. `lenient` selects the variant without
 * `additionalProperties: false`.
 */
export function compiledSchema(kind: DocumentKind, lenient = false): ValidateFunction {
  const key = `${lenient ? 'lenient' : 'strict'}:${kind}`;
  const hit = compiled.get(key);
  if (hit) return hit;
  let fn: ValidateFunction;
  if (lenient) {
    lenientAjv ??= (() => {
      const ajv = new Ajv2020(AJV_OPTIONS);
      addFormats(ajv);
      for (const file of ALL_SCHEMA_FILES) ajv.addSchema(lenientCopy(loadSchemaFile(file)));
      return ajv;
    })();
    const id = String(lenientCopy(loadSchema(kind)).$id);
    const got = lenientAjv.getSchema(id);
    if (!got) throw new LoretraceError('schema_missing', `schema ${id} did not compile`, { expected: 'a valid JSON Schema 2020-12 document' });
    fn = got;
  } else {
    strictAjv ??= createAjv();
    const id = String(loadSchema(kind).$id);
    const got = strictAjv.getSchema(id);
    if (!got) throw new LoretraceError('schema_missing', `schema ${id} did not compile`, { expected: 'a valid JSON Schema 2020-12 document' });
    fn = got;
  }
  compiled.set(key, fn);
  return fn;
}

/**
 * The compiled (cached) strict validator of one of loretrace's own outputs (see {@link OUTPUT_SCHEMA_FILES}), from
 * the same Ajv instance as the contract schemas. Tests validate real outputs with it; `validate capture-fragment`
 * uses the `capture_fragment` one through {@link compiledSchema}.
 * @throws LoretraceError `schema_missing` when the file is absent, not JSON, or does not compile.
 */
export function outputSchema(name: OutputSchemaName): ValidateFunction {
  const key = `output:${name}`;
  const hit = compiled.get(key);
  if (hit) return hit;
  strictAjv ??= createAjv();
  const id = String(loadSchemaFile(OUTPUT_SCHEMA_FILES[name]).$id);
  const fn = strictAjv.getSchema(id);
  if (!fn) throw new LoretraceError('schema_missing', `schema ${id} did not compile`, { expected: 'a valid JSON Schema 2020-12 document' });
  compiled.set(key, fn);
  return fn;
}
