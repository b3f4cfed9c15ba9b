/**
 * Validate a bench-results object against schemas/bench-results.schema.json (JSON Schema 2020-12,
 * ajv + ajv-formats). Returns `<JSON pointer>: <message>` strings, empty when valid.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

export const SCHEMA_FILE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'schemas', 'bench-results.schema.json');

/** @param {unknown} results @returns {Promise<string[]>} */
export async function validateResults(results) {
  const schema = JSON.parse(await readFile(SCHEMA_FILE, 'utf8'));
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats.default ? addFormats.default(ajv) : addFormats(ajv);
  const validate = ajv.compile(schema);
  if (validate(results)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'}: ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
}
