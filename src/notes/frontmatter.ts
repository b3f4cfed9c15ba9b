/**
 * YAML frontmatter (parsed with the `yaml` package) and the note fields read from it.
 * Internal helpers of the notes stage; findings use code `bad_frontmatter`.
 */
import { isMap, parseDocument } from 'yaml';
import type { Finding } from '../errors.js';

/** Result of reading a frontmatter block. */
export interface FrontmatterResult {
  /** Plain-JSON mapping, or null (no frontmatter, empty, not a mapping, or bad YAML). */
  data: Record<string, unknown> | null;
  findings: Finding[];
}

/**
 * Parse the YAML between the `---` fences.
 *
 * @param yamlText the text between the fences (as mdast's `yaml` node holds it).
 * @param firstLine 1-based file line of the first YAML line (the line after the opening `---`).
 * @returns the mapping as plain JSON (dates and other tagged values pass through `JSON` once), or null
 *   with a `bad_frontmatter` finding (severity `warning`) naming the file line when the YAML does not
 *   parse or is not a mapping. Empty frontmatter is null without a finding.
 */
export function readFrontmatter(path: string, yamlText: string, firstLine: number): FrontmatterResult {
  const findings: Finding[] = [];
  if (yamlText.trim() === '') return { data: null, findings };
  const doc = parseDocument(yamlText, { prettyErrors: true });
  if (doc.errors.length > 0) {
    const err = doc.errors[0]!;
    const pos = err.linePos?.[0];
    const line = pos ? firstLine + pos.line - 1 : firstLine;
    const what = (err.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
    findings.push({
      code: 'bad_frontmatter',
      severity: 'warning',
      message: `${path}:${line}: frontmatter is not valid YAML (${what}); the note is indexed without frontmatter fields`,
      path,
      line,
      ...(pos ? { column: pos.col } : {}),
    });
    return { data: null, findings };
  }
  if (doc.contents === null) return { data: null, findings };
  if (!isMap(doc.contents)) {
    findings.push({
      code: 'bad_frontmatter',
      severity: 'warning',
      message: `${path}:${firstLine}: frontmatter is YAML but not a mapping (expected \`key: value\` lines); the note is indexed without frontmatter fields`,
      path,
      line: firstLine,
    });
    return { data: null, findings };
  }
  try {
    const js: unknown = doc.toJS({ maxAliasCount: 100 });
    return { data: JSON.parse(JSON.stringify(js)) as Record<string, unknown>, findings };
  } catch (e) {
    findings.push({
      code: 'bad_frontmatter',
      severity: 'warning',
      message: `${path}:${firstLine}: frontmatter could not be converted to JSON (${(e as Error).message}); the note is indexed without frontmatter fields`,
      path,
      line: firstLine,
    });
    return { data: null, findings };
  }
}

/** A string or list-of-strings property as a list (numbers are stringified; other values dropped). */
function stringList(value: unknown): string[] {
  const items = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
  const out: string[] = [];
  for (const item of items) {
    if (typeof item === 'string' || typeof item === 'number') {
      const s = String(item).trim();
      if (s !== '') out.push(s);
    }
  }
  return out;
}

/** Frontmatter `aliases` (or legacy `alias`): a string is one alias, a list is many; file order. */
export function frontmatterAliases(fm: Record<string, unknown> | null): string[] {
  if (!fm) return [];
  return stringList(fm.aliases ?? fm.alias);
}

/**
 * Frontmatter `tags` (or legacy `tag`): a list, or a string split at commas and whitespace; a leading
 * `#` is dropped.
 */
export function frontmatterTags(fm: Record<string, unknown> | null): string[] {
  if (!fm) return [];
  const raw = fm.tags ?? fm.tag;
  const list = typeof raw === 'string' ? raw.split(/[,\s]+/) : stringList(raw);
  return list.map((t) => t.trim().replace(/^#/, '')).filter((t) => t !== '');
}

/** Frontmatter `title` when it is a non-empty string or a number, else null. */
export function frontmatterTitle(fm: Record<string, unknown> | null): string | null {
  const t = fm?.title;
  if (typeof t === 'string' && t.trim() !== '') return t.trim();
  if (typeof t === 'number') return String(t);
  return null;
}
