/**
 * YAML frontmatter (parsed with the `yaml` package) and the note fields read from it.
 * Internal helpers of the notes stage; findings use codes `bad_frontmatter` and `duplicate_frontmatter_key`.
 */
import { isAlias, isMap, isScalar, isSeq, parseDocument, visit } from 'yaml';
import type { Document, Node as YamlNode, YAMLMap } from 'yaml';
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
 *   `<<` merge keys are resolved (YAML 1.1 merge, the `yaml` package's `merge` option; Obsidian and PyYAML
 *   read them so): `<<: {visibility: author-only}` is the key `visibility`. A key the mapping sets itself and
 *   a merge sets too keeps the mapping's value and gets a `duplicate_frontmatter_key` warning like a repeat;
 *   a merge of a scalar (`<<: author-only`) cannot become JSON and is `bad_frontmatter`, and so is a key that
 *   is a collection (`? [visibility]`, {@link collectionKey}). The `yaml` package prints nothing
 *   ({@link YAML_OPTIONS}).
 */
export function readFrontmatter(path: string, yamlText: string, firstLine: number): FrontmatterResult {
  const findings: Finding[] = [];
  if (yamlText.trim() === '') return { data: null, findings };
  let doc = parseDocument(yamlText, YAML_OPTIONS);
  const duplicates = doc.errors.filter((e) => e.code === 'DUPLICATE_KEY');
  const errors = doc.errors.filter((e) => e.code !== 'DUPLICATE_KEY');
  if (errors.length === 0 && duplicates.length > 0) {
    // Obsidian keeps the last value of a repeated key; so do we, with a warning per repeat. Any other
    // YAML error still drops the whole block (below), and the alias cap still applies in toJS.
    doc = parseDocument(yamlText, { ...YAML_OPTIONS, uniqueKeys: false });
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
  const complex = collectionKey(doc, yamlText, path, firstLine);
  if (complex) {
    findings.push(complex);
    return { data: null, findings };
  }
  findings.push(...mergeOverrides(doc, yamlText, path, firstLine));
  const recursive = recursiveAlias(doc, yamlText, path, firstLine);
  if (recursive) {
    findings.push(recursive);
    return { data: null, findings };
  }
  try {
    const js: unknown = doc.toJS({ maxAliasCount: 100 });
    return { data: JSON.parse(JSON.stringify(js)) as Record<string, unknown>, findings };
  } catch (e) {
    findings.push({
      code: 'bad_frontmatter',
      severity: 'warning',
      // One line (README: errors are one line): a library message may span several.
      message: `${path}:${firstLine}: frontmatter could not be converted to JSON (${(e as Error).message.split('\n')[0]!.trim()}); its lines are indexed as body text (chunked, searchable, with their links), without frontmatter fields`,
      path,
      line: firstLine,
    });
    return { data: null, findings };
  }
}

/**
 * Options of every frontmatter parse. `merge: true`: a `<<` key merges its map(s) into the mapping (YAML 1.1
 * merge keys), as Obsidian's and PyYAML's readers do — without it `<<: {visibility: author-only}` would hide
 * the marker under a key `<<`. `logLevel: 'silent'`: the `yaml` package would otherwise print warnings (such
 * as "Keys with collection values will be stringified") to stderr itself; library code never prints, and
 * what those warnings mean is reported as findings here.
 */
export const YAML_OPTIONS = Object.freeze({ prettyErrors: true, merge: true, logLevel: 'silent' as const });

/**
 * A `bad_frontmatter` finding for the first key that is a collection (YAML's complex key, `? [visibility]`
 * then `: author-only`), or null. JSON keys are strings, so the `yaml` package would stringify it
 * (`"[ visibility ]"`) and the value would sit under a key nobody wrote; the block is instead not frontmatter
 * (its lines are body text, and the policy denies the note under `allowed_prefixes`, fail closed, as for any
 * block that does not parse). `line` is the file line of the key's `?` or first character.
 */
function collectionKey(doc: Document, yamlText: string, path: string, firstLine: number): Finding | null {
  let found: { range?: [number, number, number] } | null = null;
  visit(doc, {
    Pair(_, pair) {
      const key = isAlias(pair.key) ? (pair.key.resolve(doc) as YamlNode | undefined) : pair.key;
      if (isMap(key) || isSeq(key)) {
        found = pair.key as { range?: [number, number, number] };
        return visit.BREAK;
      }
      return undefined;
    },
  });
  if (found === null) return null;
  const range = (found as { range?: [number, number, number] }).range;
  const before = range ? yamlText.slice(0, range[0]) : '';
  const keyLine = firstLine + (before.split('\n').length - 1);
  return {
    code: 'bad_frontmatter',
    severity: 'warning',
    message: `${path}:${keyLine}: frontmatter has a key that is a collection (a YAML complex key, \`? [...]\` or \`? {...}\`), which has no JSON form; its lines are indexed as body text (chunked, searchable, with their links), without frontmatter fields`,
    path,
    line: keyLine,
  };
}

/**
 * A `bad_frontmatter` finding for the first alias used inside the very node its anchor names (`a: &x [*x]`,
 * `v: &v {a: *v}`): the `yaml` package builds a circular structure from it, which has no JSON form (JSON.stringify
 * would throw node's multi-line "Converting circular structure" text). Null when there is none. The line is the
 * alias's own file line (`firstLine` is the file line of the first YAML line). YAML aliases refer only to
 * earlier anchors, so self-inclusion is the only way a cycle can form.
 */
function recursiveAlias(doc: Document, yamlText: string, path: string, firstLine: number): Finding | null {
  let found: { name: string; offset: number } | null = null;
  visit(doc, {
    Alias(_, alias, ancestors) {
      const target = alias.resolve(doc);
      if (target !== undefined && ancestors.includes(target as never)) {
        found = { name: alias.source, offset: alias.range?.[0] ?? 0 };
        return visit.BREAK;
      }
      return undefined;
    },
  });
  if (found === null) return null;
  const { name, offset } = found as { name: string; offset: number };
  const line = firstLine + (yamlText.slice(0, offset).split('\n').length - 1);
  return {
    code: 'bad_frontmatter',
    severity: 'warning',
    message: `${path}:${line}: frontmatter has a recursive alias (*${name} is used inside the node anchored &${name}, which has no JSON form); expected an alias to refer to a node outside itself — its lines are indexed as body text (chunked, searchable, with their links), without frontmatter fields`,
    path,
    line,
  };
}

/** Whether a pair's key is the YAML merge key `<<` (the `yaml` package gives it as a symbol with `merge: true`). */
function isMergeKey(key: unknown): boolean {
  const v = isScalar(key) ? key.value : key;
  return v === '<<' || (typeof v === 'symbol' && v.description === '<<');
}

/** The keys a `<<` merge source gives (a map, an alias of one, or a list of those; nested merges included). */
function mergeSourceKeys(source: unknown, doc: Document, depth = 0): string[] {
  if (depth > 16) return [];
  const node = isAlias(source) ? (source.resolve(doc) as YamlNode | undefined) : source;
  if (isSeq(node)) return node.items.flatMap((item) => mergeSourceKeys(item, doc, depth + 1));
  if (!isMap(node)) return [];
  return (node as YAMLMap).items.flatMap((pair) => (isMergeKey(pair.key) ? mergeSourceKeys(pair.value, doc, depth + 1) : [isScalar(pair.key) ? String(pair.key.value) : String(pair.key)]));
}

/**
 * `duplicate_frontmatter_key` warnings for keys a mapping sets both itself and through a `<<` merge key:
 * YAML keeps the mapping's own value, so the merged one is dropped silently — two answers to one key, which
 * the hidden-note rule reads fail closed like any repeated key (src/policy/compile.ts). The message names the
 * key as a repeat does (`frontmatter key "visibility" is repeated …`) and the file line of the merge key.
 */
function mergeOverrides(doc: Document, yamlText: string, path: string, firstLine: number): Finding[] {
  const out: Finding[] = [];
  visit(doc, {
    Map(_, map) {
      const own = map.items.filter((p) => !isMergeKey(p.key)).map((p) => (isScalar(p.key) ? String(p.key.value) : String(p.key)));
      for (const pair of map.items) {
        if (!isMergeKey(pair.key)) continue;
        const range = (pair.key as { range?: [number, number, number] } | null)?.range;
        const line = firstLine + (range ? yamlText.slice(0, range[0]).split('\n').length - 1 : 0);
        for (const k of new Set(mergeSourceKeys(pair.value, doc))) {
          if (!own.includes(k)) continue;
          const key = k.length > 100 ? `${k.slice(0, 100)}…` : k;
          out.push({ code: 'duplicate_frontmatter_key', severity: 'warning', message: `${path}:${line}: frontmatter key ${JSON.stringify(key)} is repeated (set in its mapping and by the \`<<\` merge key on this line); the mapping's own value is kept (YAML merge keys)`, path, line });
        }
      }
    },
  });
  return out;
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
