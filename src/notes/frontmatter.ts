/**
 * YAML frontmatter (parsed with the `yaml` package) and the note fields read from it.
 * Internal helpers of the notes stage; findings use codes `bad_frontmatter` and `duplicate_frontmatter_key`.
 */
import { isMap, isScalar, parseDocument, visit } from 'yaml';
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
 *   parse or is not a mapping. Empty frontmatter is null without a finding. A repeated key alone is not
 *   an error: the last value wins (as in Obsidian) and each repeat gets a `duplicate_frontmatter_key`
 *   warning naming its file line and the key. An alias bomb (more than 100 alias expansions) is refused.
 */
export function readFrontmatter(path: string, yamlText: string, firstLine: number): FrontmatterResult {
  const findings: Finding[] = [];
  if (yamlText.trim() === '') return { data: null, findings };
  let doc = parseDocument(yamlText, { prettyErrors: true });
  const duplicates = doc.errors.filter((e) => e.code === 'DUPLICATE_KEY');
  const errors = doc.errors.filter((e) => e.code !== 'DUPLICATE_KEY');
  if (errors.length === 0 && duplicates.length > 0) {
    // Obsidian keeps the last value of a repeated key; so do we, with a warning per repeat. Any other
    // YAML error still drops the whole block (below), and the alias cap still applies in toJS.
    doc = parseDocument(yamlText, { prettyErrors: true, uniqueKeys: false });
    const keyAt = new Map<number, string>();
    visit(doc, {
      Pair(_, pair) {
        const k = pair.key as { range?: [number, number, number]; value?: unknown } | null;
        if (k && k.range) keyAt.set(k.range[0], isScalar(k) ? String(k.value) : String(k));
      },
    });
    for (const dup of duplicates) {
      const pos = dup.linePos?.[0];
      const line = pos ? firstLine + pos.line - 1 : firstLine;
      const raw = keyAt.get(dup.pos[0]) ?? yamlText.slice(dup.pos[0], dup.pos[1]);
      const key = raw.length > 100 ? `${raw.slice(0, 100)}…` : raw;
      findings.push({
        code: 'duplicate_frontmatter_key',
        severity: 'warning',
        message: `${path}:${line}: frontmatter key ${JSON.stringify(key)} is repeated; the last value is kept (as Obsidian does)`,
        path,
        line,
        ...(pos ? { column: pos.col } : {}),
      });
    }
  }
  if (errors.length > 0 || doc.errors.length > 0) {
    const err = errors[0] ?? doc.errors[0]!;
    const pos = err.linePos?.[0];
    const line = pos ? firstLine + pos.line - 1 : firstLine;
    const what = (err.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
    findings.push({
      code: 'bad_frontmatter',
      severity: 'warning',
      message: `${path}:${line}: frontmatter is not valid YAML (${what}); its lines are indexed as body text (chunked, searchable, with their links), without frontmatter fields`,
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
      message: `${path}:${firstLine}: frontmatter is YAML but not a mapping (expected \`key: value\` lines); its lines are indexed as body text (chunked, searchable, with their links), without frontmatter fields`,
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
      message: `${path}:${firstLine}: frontmatter could not be converted to JSON (${(e as Error).message}); its lines are indexed as body text (chunked, searchable, with their links), without frontmatter fields`,
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
