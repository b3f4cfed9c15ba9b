/**
 * Property links: `[[wikilinks]]` inside frontmatter property values.
 *
 * Obsidian (1.4+, "Properties") stores internal links in Text and List properties, written in quotes
 * (`link: "[[Episode IV]]"`, list items `- "[[Link]]"`: Obsidian help, "Properties" → Property types),
 * and counts them as links of the note — in backlinks and the resolved graph — apart from body links
 * (`metadataCache` keeps them as `frontmatterLinks`, each with its property `key`). loretrace records
 * each as a {@link LinkRecord} with position `property`, the property's name in `property`, and the line
 * and column of its `[[` in the file; it resolves like a body link.
 *
 * Only string values count (a YAML key, a number or an unquoted `[[X]]` — which YAML reads as a nested
 * list — is not a link, as in Obsidian). `property` is the top-level key the value sits under.
 */
import { isPair, isScalar, parseDocument, visit, type Pair, type Scalar } from 'yaml';
import type { LinkRecord, LinkSyntax, VaultPath } from '../types.js';
import { lineStartOffsets, locateOffset } from '../notes/lines.js';
import { wikiLinkEnd } from '../notes/pathological.js';
import { parseWikiLinkContent } from '../notes/wikilink.js';

/**
 * Every wikilink and embed in the string values of a frontmatter block, in file order.
 *
 * @param path the note's vault path.
 * @param yamlText the text between the `---` fences (the mdast `yaml` node's value).
 * @param firstLine 1-based file line of the first YAML line (the line after the opening `---`).
 * @returns link records with `chunk_index` null, `position` `property`, `property` set, resolution `pending`;
 *   none when the YAML does not parse (the caller has already reported `bad_frontmatter`).
 */
export function propertyLinks(path: VaultPath, yamlText: string, firstLine: number): LinkRecord[] {
  if (!yamlText.includes('[[')) return [];
  const doc = parseDocument(yamlText, { uniqueKeys: false, logLevel: 'silent' });
  if (doc.errors.length > 0) return [];
  const starts = lineStartOffsets(yamlText);
  const links: LinkRecord[] = [];
  visit(doc, {
    Scalar(key, node: Scalar, ancestors) {
      if (key === 'key' || typeof node.value !== 'string' || !node.range || !node.value.includes('[[')) return;
      const top = ancestors.find((a): a is Pair => isPair(a));
      const property = top && isScalar(top.key) ? String(top.key.value) : null;
      if (property === null) return;
      const [from, to] = node.range;
      for (let i = yamlText.indexOf('[[', from); i !== -1 && i < to; i = yamlText.indexOf('[[', i + 2)) {
        const at = i > from && yamlText.charCodeAt(i - 1) === 33 ? i - 1 : i;
        const end = wikiLinkEnd(yamlText, at, to);
        if (end === -1) continue;
        const embed = at !== i;
        const content = yamlText.slice(i + 2, end - 2);
        const parts = parseWikiLinkContent(content);
        const { line, column } = locateOffset(starts, at);
        const syntax: LinkSyntax = embed ? 'embed' : parts.fragment === null ? 'wikilink' : parts.fragment.startsWith('^') ? 'block_link' : 'heading_link';
        links.push({
          source_path: path,
          line: firstLine + line - 1,
          column,
          chunk_index: null,
          syntax,
          position: 'property',
          property,
          raw: yamlText.slice(at, end),
          target: parts.target,
          fragment: parts.fragment === '' ? null : parts.fragment,
          display: parts.display === '' ? null : parts.display,
          resolution: { status: 'pending' },
        });
        i = end - 2;
      }
    },
  });
  return links.sort((a, b) => a.line - b.line || a.column - b.column);
}
