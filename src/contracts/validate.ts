/**
 * Validators for the three Ghostlight contracts: JSON Schema (ajv, src/contracts/schemas.ts) plus the cross-field
 * rules of src/contracts/rules.ts, merged into one {@link ValidationReport} per document. Pure apart from the
 * `ref.*` rules, which look at the file system only when `options.root` is given. Never throws for an invalid
 * document: invalidity is data. Throws only for a broken install (`schema_missing`).
 */
import type { ErrorObject } from 'ajv';
import { LoretraceError } from '../errors.js';
import { compiledSchema } from './schemas.js';
import { captureFragmentRules, captureRules, escapePointerToken, packetRules, preview, projectedContextRules } from './rules.js';
import { parseStrictJson } from './json-input.js';
import type { DocumentKind, ValidateOptions, ValidationIssue, ValidationReport } from './types.js';

const DEFAULT_FILE = '<input>';

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function snake(keyword: string): string {
  return keyword.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
}

/** Where a field sits, for messages: `/lore_access/mode` → `lore_access.mode`, `""` → `the document`. */
function fieldName(pointer: string): string {
  return pointer === '' ? 'the document' : pointer.slice(1).replace(/\//g, '.').replace(/~1/g, '/').replace(/~0/g, '~');
}

/** Turn one ajv error into a {@link ValidationIssue} with a stable `schema.<keyword>` rule id. */
function fromAjv(e: ErrorObject): ValidationIssue {
  const p = e.params as Record<string, unknown>;
  const at = e.instancePath;
  switch (e.keyword) {
    case 'required': {
      const name = String(p.missingProperty);
      const pointer = `${at}/${escapePointerToken(name)}`;
      return { rule: 'schema.required', pointer, message: `${fieldName(at)} is missing required property "${name}"`, expected: `property "${name}" present` };
    }
    case 'additionalProperties': {
      const name = String(p.additionalProperty);
      const allowed = Object.keys(((e.parentSchema as Record<string, unknown> | undefined)?.properties as Record<string, unknown> | undefined) ?? {});
      return {
        rule: 'schema.additional_property',
        pointer: `${at}/${escapePointerToken(name)}`,
        message: `${fieldName(at)} has unknown property "${name}"`,
        expected: allowed.length ? `only the properties ${allowed.join(', ')}` : 'no other properties',
      };
    }
    case 'enum':
      return { rule: 'schema.enum', pointer: at, message: `${fieldName(at)} is ${preview(e.data)}, not an allowed value`, expected: `one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` };
    case 'const':
      return { rule: 'schema.const', pointer: at, message: `${fieldName(at)} is ${preview(e.data)}`, expected: JSON.stringify(p.allowedValue) };
    case 'type':
      return { rule: 'schema.type', pointer: at, message: `${fieldName(at)} is ${jsonType(e.data) === 'integer' || jsonType(e.data) === 'number' ? 'a number' : `of type ${jsonType(e.data)}`}`, expected: String(p.type) };
    case 'minLength':
      return { rule: 'schema.min_length', pointer: at, message: `${fieldName(at)} is shorter than ${String(p.limit)} character(s)`, expected: `a string of at least ${String(p.limit)} character(s)` };
    case 'minItems':
      return { rule: 'schema.min_items', pointer: at, message: `${fieldName(at)} has fewer than ${String(p.limit)} item(s)`, expected: `an array of at least ${String(p.limit)} item(s)` };
    case 'minimum':
      return { rule: 'schema.minimum', pointer: at, message: `${fieldName(at)} is ${preview(e.data)}, below the minimum`, expected: `a number ${String(p.comparison)} ${String(p.limit)}` };
    case 'oneOf': {
      const desc = (e.parentSchema as Record<string, unknown> | undefined)?.description;
      return { rule: 'schema.one_of', pointer: at, message: `${fieldName(at)} (${preview(e.data)}) matches ${p.passingSchemas ? 'more than one' : 'none'} of the allowed shapes`, expected: typeof desc === 'string' ? desc : 'exactly one of the allowed shapes' };
    }
    default:
      return { rule: `schema.${snake(e.keyword)}`, pointer: at, message: `${fieldName(at)} ${e.message ?? 'is invalid'}` };
  }
}

/** ajv errors → issues, dropping the per-branch errors under a failed `oneOf` (the `oneOf` error says it once). */
function schemaIssues(errors: ErrorObject[] | null | undefined): ValidationIssue[] {
  const list = errors ?? [];
  const oneOfs = list.filter((e) => e.keyword === 'oneOf');
  return list
    .filter((e) => !oneOfs.some((o) => o !== e && e.schemaPath.startsWith(o.schemaPath + '/') && (e.instancePath === o.instancePath || e.instancePath.startsWith(o.instancePath + '/'))))
    .map(fromAjv);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Sort (pointer, rule, message — code-unit order) and drop exact duplicates. */
function tidy(issues: ValidationIssue[]): ValidationIssue[] {
  const sorted = [...issues].sort((a, b) => cmp(a.pointer, b.pointer) || cmp(a.rule, b.rule) || cmp(a.message, b.message));
  return sorted.filter((x, i) => i === 0 || JSON.stringify(x) !== JSON.stringify(sorted[i - 1]));
}

/**
 * Validate one parsed document of the given kind: schema (strict, or lenient with `options.lenient`) plus the
 * kind's cross-field rules. Returns a report; never throws for invalid input.
 * Example: `validateDocument('capture', capture, { file: 'x.capture.json' })` on a Lucent capture gives
 * `{ valid: false, errors: [{ rule: 'schema.additional_property', pointer: '/raw_output_exact', ... }] }`.
 */
export function validateDocument(kind: DocumentKind, value: unknown, options: ValidateOptions = {}): ValidationReport {
  const file = options.file ?? DEFAULT_FILE;
  const lenient = options.lenient === true;
  const strictFn = compiledSchema(kind, false);
  strictFn(value);
  const strictIssues = schemaIssues(strictFn.errors);
  let errors: ValidationIssue[];
  let warnings: ValidationIssue[] = [];
  if (lenient) {
    const lenientFn = compiledSchema(kind, true);
    lenientFn(value);
    errors = schemaIssues(lenientFn.errors);
    warnings = strictIssues
      .filter((i) => i.rule === 'schema.additional_property')
      .map((i) => ({ rule: 'lenient.ignored_property', pointer: i.pointer, message: `${i.message}; ignored (lenient)` }));
  } else {
    errors = strictIssues;
  }
  const rules = kind === 'packet' ? packetRules : kind === 'capture' ? captureRules : kind === 'capture-fragment' ? captureFragmentRules : projectedContextRules;
  errors.push(...rules(value, options.root));
  const tidied = tidy(errors);
  return { file, kind, valid: tidied.length === 0, errors: tidied, warnings: tidy(warnings) };
}

/**
 * Validate a responder packet (seed 000 schema + the packet rules of docs/VALIDATE.md).
 * Options: `file` (name in the report), `lenient` (ignore unknown properties, reported as warnings),
 * `root` (enables `ref.not_found` / `ref.outside_root` for coordinator_artifact_ref and projected_context_ref).
 */
export function validatePacket(value: unknown, options: ValidateOptions = {}): ValidationReport {
  return validateDocument('packet', value, options);
}

/**
 * Validate a responder output capture (Ghostlight responder-output schema + the capture rules: raw_output ⇔
 * parsed_output, agent id, research_trace receipts, research-mode receipts). Same options as {@link validatePacket};
 * with `root`, packet_ref, coordinator_artifact_ref and isolation.visible_input_ref must exist.
 */
export function validateCapture(value: unknown, options: ValidateOptions = {}): ValidationReport {
  return validateDocument('capture', value, options);
}

/**
 * Validate a projected local context (Ghostlight projected-local-context schema; with `root`, input.fixture_ref
 * and input.annotation_ref must exist). Note: every real projected context in ../shared/ghostlight fails the
 * contract at /context/projection_controls (an array where the contract demands an object).
 */
export function validateProjectedContext(value: unknown, options: ValidateOptions = {}): ValidationReport {
  return validateDocument('projected-context', value, options);
}

/**
 * Validate a capture fragment — the `lore_access` receipts written by `retrieve --capture-out` and
 * `ledger export` (schemas/capture-fragment.schema.json + the `fragment.*`, `trace.*` and
 * `research.missing_consulted_refs` rules). `lenient` ignores unknown properties as for the contract kinds;
 * `root` has no effect (a fragment holds no repository refs). Line-by-line truth against the vault is
 * `verifyTrace`'s job.
 */
export function validateCaptureFragment(value: unknown, options: ValidateOptions = {}): ValidationReport {
  return validateDocument('capture-fragment', value, options);
}

/**
 * Parse JSON text read from `file` (a leading UTF-8 BOM is ignored, as Ghostlight reads with utf-8-sig),
 * refusing duplicate keys (src/contracts/json-input.ts).
 * Throws `LoretraceError('bad_json', …, exitCode 2)` naming the file, the 1-based line and column and the reason:
 * `packet.json is not JSON: expected ',' or '}', found "]" at line 3, column 7`; `duplicate_key` (exit 2)
 * with the JSON pointer and the lines of both occurrences.
 */
export function parseJsonDocument(text: string, file: string): unknown {
  return parseStrictJson(text, file);
}
