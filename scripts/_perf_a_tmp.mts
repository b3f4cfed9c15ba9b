import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseMarkdown } from '../src/notes/parse.js';
import { buildChunks } from '../src/chunks/chunk.js';
import { collectNoteRefs } from '../src/links/extract.js';
import { remarkWikiLink } from '../src/notes/wikilink.js';
import { unified } from 'unified'; import remarkParse from 'remark-parse'; import remarkGfm from 'remark-gfm'; import remarkFrontmatter from 'remark-frontmatter';
function walk(d: string, out: string[] = []) { for (const e of readdirSync(d)) { if (e.startsWith('.')) continue; const p = join(d, e); if (statSync(p).isDirectory()) walk(p, out); else out.push(p); } return out; }
const root = '/work/shared/lore/AetheriaLore';
const files = walk(root).filter(f => f.endsWith('.md'));
const texts = files.map(f => [relative(root, f), readFileSync(f, 'utf8')] as const);
const time = (name: string, fn: () => void) => { const t0 = performance.now(); for (let k = 0; k < 5; k++) fn(); console.log(name, ((performance.now() - t0) / 5).toFixed(0), 'ms'); };
for (let rep = 0; rep < 2; rep++) {
time('remark', () => { const p = unified().use(remarkParse); for (const [, t] of texts) p.parse(t); });
time('remark+gfm', () => { const p = unified().use(remarkParse).use(remarkGfm); for (const [, t] of texts) p.parse(t); });
time('remark+fm', () => { const p = unified().use(remarkParse).use(remarkFrontmatter, ['yaml']); for (const [, t] of texts) p.parse(t); });
time('remark+wl', () => { const p = unified().use(remarkParse).use(remarkWikiLink); for (const [, t] of texts) p.parse(t); });
time('parseMarkdown', () => { for (const [p, t] of texts) parseMarkdown(p, t); });
const syn = texts.map(([p, t]) => parseMarkdown(p, t));
time('chunks', () => { for (const s of syn) buildChunks(s); });
time('refs', () => { for (const s of syn) collectNoteRefs(s, buildChunks(s).chunks); });
}
