/**
 * Plain-English `follow_link_classes` phrases → target classes.
 *
 * Real packets write link classes as phrases ("referenced social movements shaping a visible
 * faction's values"). A phrase is split into words; each word (lower-cased, possessive `'s` dropped,
 * then tried as written and in a simple singular form) is looked up in {@link DEFAULT_LINK_CLASS_SYNONYMS}
 * (extended by vault config `link_class_synonyms`) and, failing that, among the index's own target
 * classes (`politics`, `technology`, `events`…). The phrase maps to the union of what its words map to.
 * Words that map to nothing ("referenced", "docs", "Jovian") are simply not used; a phrase in which no
 * word maps is advisory.
 *
 * Target classes are the indexer's taxonomy (src/links/classes.ts): lower-kebab folder segments (`factions`, `powers`, `major`,
 * `movements`, `timeline`, `events`, `technology`, `politics`, `species`…) plus config class rules.
 */

/**
 * The built-in synonym table (documented in docs/TRAVERSAL.md). Keys are single lower-case words in
 * singular form; values are target classes.
 */
export const DEFAULT_LINK_CLASS_SYNONYMS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  // factions and institutions
  faction: ['factions'],
  institution: ['factions'],
  organization: ['factions'],
  organisation: ['factions'],
  guild: ['factions'],
  power: ['powers'],
  company: ['powers'],
  corporation: ['powers'],
  corp: ['powers'],
  megacorp: ['powers'],
  megacorporation: ['powers'],
  // movements
  movement: ['movements'],
  ideology: ['movements'],
  activist: ['movements'],
  // territory and places
  territory: ['territories'],
  location: ['territories', 'locations'],
  habitat: ['territories', 'habitats'],
  place: ['territories', 'locations'],
  region: ['territories'],
  // politics and law
  politics: ['politics'],
  political: ['politics'],
  law: ['politics'],
  legal: ['politics'],
  treaty: ['politics'],
  regulation: ['politics'],
  // technology
  technology: ['technology'],
  tech: ['technology'],
  technical: ['technology'],
  // events and history
  event: ['events'],
  precedent: ['events'],
  flashpoint: ['events'],
  history: ['events', 'timeline'],
  historical: ['events', 'timeline'],
  incident: ['events'],
  // species and bodies
  species: ['species'],
  body: ['species'],
});

/** Words that name frontmatter properties in a `follow_link_classes` phrase. */
const PROPERTY_WORDS = new Set(['property', 'properties', 'frontmatter', 'metadata']);
/** Words that say the phrase is about links (so "property disputes" is not a link class). */
const LINK_WORDS = new Set(['link', 'links', 'linked']);

/**
 * The position class a plain-English phrase names, or null: a phrase with a link word (`link`, `links`,
 * `linked`) and a property word (`property`, `properties`, `frontmatter`, `metadata`) — "linked
 * properties", "property links", "links in frontmatter" — names `property` (links in frontmatter
 * property values, which Obsidian 1.4+ records as links of the note; docs/PARSING.md, "Property links").
 */
export function phrasePositionClass(phrase: string): { position: 'property'; words: string[] } | null {
  const words = phraseWords(phrase);
  const prop = words.filter((w) => PROPERTY_WORDS.has(w));
  const link = words.filter((w) => LINK_WORDS.has(w));
  return prop.length > 0 && link.length > 0 ? { position: 'property', words: [...link, ...prop] } : null;
}

/** How one word of a phrase mapped. */
export interface WordMapping {
  word: string;
  classes: string[];
  /** `synonym` (built-in table), `config` (vault `link_class_synonyms`), `class` (an index class name). */
  via: 'synonym' | 'config' | 'class';
}

/** Words of a phrase: lower-case, NFC, possessive `'s`/`’s` dropped, split on non-letters/digits/hyphen. */
export function phraseWords(phrase: string): string[] {
  return phrase
    .normalize('NFC')
    .toLowerCase()
    .replace(/['’]s\b/g, '')
    .split(/[^\p{L}\p{N}-]+/u)
    .map((w) => w.replace(/^-+|-+$/g, ''))
    .filter((w) => w.length > 0);
}

/** Singular candidates of a word: itself, then `-ies → -y`, `-es → ''`, `-s → ''`. */
function forms(word: string): string[] {
  const out = [word];
  if (word.endsWith('ies') && word.length > 4) out.push(word.slice(0, -3) + 'y');
  if (word.endsWith('es') && word.length > 3) out.push(word.slice(0, -2));
  if (word.endsWith('s') && !word.endsWith('ss') && word.length > 3) out.push(word.slice(0, -1));
  return out;
}

/**
 * Map a phrase to target classes.
 * @param phrase  a `follow_link_classes` entry.
 * @param indexClasses  every target class present in the index (a word equal to one maps to it).
 * @param configSynonyms  vault config `link_class_synonyms` (keys are matched like built-in ones and
 *   take precedence over them).
 * @returns the per-word mappings (in phrase order, each word once) and the sorted union of classes.
 */
export function mapLinkClassPhrase(
  phrase: string,
  indexClasses: ReadonlySet<string>,
  configSynonyms: Readonly<Record<string, readonly string[]>> = {},
): { words: WordMapping[]; classes: string[] } {
  const configTable = new Map<string, readonly string[]>();
  for (const [k, v] of Object.entries(configSynonyms)) configTable.set(k.normalize('NFC').toLowerCase(), v);
  const words: WordMapping[] = [];
  const seen = new Set<string>();
  for (const w of phraseWords(phrase)) {
    if (seen.has(w)) continue;
    seen.add(w);
    let hit: WordMapping | null = null;
    for (const f of forms(w)) {
      const cfg = configTable.get(f);
      if (cfg) { hit = { word: w, classes: [...cfg], via: 'config' }; break; }
      // Own properties only: a word such as "constructor" must not reach Object.prototype.
      const def = Object.prototype.hasOwnProperty.call(DEFAULT_LINK_CLASS_SYNONYMS, f) ? DEFAULT_LINK_CLASS_SYNONYMS[f] : undefined;
      if (def) { hit = { word: w, classes: [...def], via: 'synonym' }; break; }
    }
    if (!hit) {
      for (const f of [w, ...forms(w).slice(1), w + 's']) {
        if (indexClasses.has(f)) { hit = { word: w, classes: [f], via: 'class' }; break; }
      }
    }
    if (hit) words.push(hit);
  }
  const classes = [...new Set(words.flatMap((m) => m.classes))].sort(cmp);
  return { words, classes };
}

/**
 * Words of a link-class phrase that qualify nothing a walk could enforce: function words, and words
 * every followed link satisfies by construction (a followed link is "referenced" or "linked"; its target
 * is a "doc" / "note" / "page"). Any other word that maps to no class is a qualifier loretrace drops.
 */
export const IMPLIED_PHRASE_WORDS: ReadonlySet<string> = new Set([
  'a', 'an', 'the', 'and', 'or', 'of', 'with', 'that', 'which', 'who', 'to', 'in', 'on', 'for', 'by', 'from', 'at', 'as', 'into', 'about', 'its', 'their',
  'referenced', 'linked', 'related', 'doc', 'docs', 'document', 'documents', 'note', 'notes', 'page', 'pages', 'file', 'files', 'lore', 'entry', 'entries',
]);

/**
 * The qualifier words of a phrase the mapping drops, in phrase order, each once: words that map to no
 * class and are not {@link IMPLIED_PHRASE_WORDS}. "resident Jovian factions and institutions" →
 * `resident, jovian`.
 */
export function unenforcedQualifiers(phrase: string, mapping: { words: readonly WordMapping[] }): string[] {
  const mapped = new Set(mapping.words.map((w) => w.word));
  return [...new Set(phraseWords(phrase))].filter((w) => !mapped.has(w) && !IMPLIED_PHRASE_WORDS.has(w));
}

/** Code-unit string compare (never localeCompare: output must not depend on the locale). */
export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
