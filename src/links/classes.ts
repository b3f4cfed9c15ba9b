/**
 * Target classes of a note: what `traversal_policy.follow_link_classes` and `search --class` filter on.
 */
import picomatch from 'picomatch';
import type { VaultConfig, VaultPath } from '../types.js';

/** Lower-kebab form of a name: NFC, lower case, runs of non-letters/digits → `-`, trimmed of `-`. */
export function kebab(name: string): string {
  return name
    .normalize('NFC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '');
}

const matcherCache = new Map<string, (p: string) => boolean>();
function matcher(glob: string): (p: string) => boolean {
  let m = matcherCache.get(glob);
  if (!m) {
    m = picomatch(glob, { dot: true });
    matcherCache.set(glob, m);
  }
  return m;
}

/**
 * Target classes of a note, sorted (code-unit order) and de-duplicated:
 *
 * 1. the lower-kebab form of every folder segment of its path
 *    (`Aetheria/Worldbuilding/Pre-Elysium/Factions/Powers/Major/Sol Dominion.md` →
 *    `aetheria`, `factions`, `major`, `powers`, `pre-elysium`, `worldbuilding`);
 * 2. `index` for an index / map-of-content note: file name `index.md` (any case), a file named like
 *    its folder (`Factions/Factions.md`), or a tag `MOC` (any case) in `extra.tags`;
 * 3. the classes of every `config.class_rules` entry whose picomatch glob matches the path
 *    (`{ "glob": "Aetheria/**\/Species/*.md", "classes": ["species"] }`).
 *
 * @param path vault-relative POSIX path.
 * @param config vault config (only `class_rules` is read).
 * @param extra the note's tags, when known (frontmatter plus inline).
 */
export function targetClasses(path: VaultPath, config: VaultConfig = {}, extra: { tags?: readonly string[] } = {}): string[] {
  const segments = path.split('/');
  const file = segments.pop() ?? '';
  const classes = new Set<string>();
  for (const seg of segments) {
    const k = kebab(seg);
    if (k !== '') classes.add(k);
  }
  const base = file.replace(/\.md$/i, '').normalize('NFC').toLowerCase();
  const parent = (segments[segments.length - 1] ?? '').normalize('NFC').toLowerCase();
  if (base === 'index' || (parent !== '' && base === parent) || (extra.tags ?? []).some((t) => t.toLowerCase() === 'moc')) {
    classes.add('index');
  }
  for (const rule of config.class_rules ?? []) {
    if (matcher(rule.glob)(path)) for (const c of rule.classes) classes.add(c);
  }
  return [...classes].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
