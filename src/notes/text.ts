/**
 * Plain text of mdast phrasing content, as loretrace shows headings and link display text.
 * Internal helper of the notes stage.
 */
import type { Nodes } from 'mdast';

/**
 * Plain text of a node: text and inline code values; wikilinks show their display text, else the
 * target and heading path joined with ` > ` (`[[A|b]]` → `b`, `[[A]]` → `A`, `[[A#H]]` → `A > H`,
 * `[[#H]]` → `H`, as Obsidian renders them); images show their alt text; HTML, footnote references
 * and breaks contribute nothing or a space.
 */
export function plainText(node: Nodes): string {
  switch (node.type) {
    case 'text':
    case 'inlineCode':
      return node.value;
    case 'wikiLink':
      if (node.display !== null && node.display !== '') return node.display;
      return [node.target, ...(node.fragment ?? '').split('#')].filter((s) => s !== '').join(' > ');
    case 'image':
      return node.alt ?? '';
    case 'break':
      return ' ';
    case 'html':
    case 'footnoteReference':
    case 'imageReference':
      return '';
    default:
      if ('children' in node) {
        let out = '';
        for (const child of node.children as Nodes[]) out += plainText(child);
        return out;
      }
      return '';
  }
}
