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
  // Iterative (explicit stack, document order): a heading may nest emphasis thousands deep.
  let out = '';
  const stack: Nodes[] = [node];
  while (stack.length > 0) {
    const n = stack.pop() as Nodes;
    switch (n.type) {
      case 'text':
      case 'inlineCode':
        out += n.value;
        break;
      case 'wikiLink':
        if (n.display !== null && n.display !== '') out += n.display;
        else out += [n.target, ...(n.fragment ?? '').split('#')].filter((s) => s !== '').join(' > ');
        break;
      case 'image':
        out += n.alt ?? '';
        break;
      case 'break':
        out += ' ';
        break;
      case 'html':
      case 'footnoteReference':
      case 'imageReference':
        break;
      default:
        if ('children' in n) {
          const children = n.children as Nodes[];
          for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as Nodes);
        }
    }
  }
  // Masked comment or math (src/notes/inert.ts) is not part of the text Obsidian shows.
  return out.includes('\uE000') ? out.replace(/\uE000+/g, '').trim() : out;
}
