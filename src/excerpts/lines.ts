/**
 * What a line and a sentence of a note are, for excerpt picking: which lines carry lore a packet may quote,
 * and which sentences can stand alone at the start of an excerpt.
 *
 * Lines (`excerptLineKind`): only `content` (prose) and `list_item` lines carry lore. Never an excerpt line:
 * - a blank line, a heading or setext underline, a thematic break;
 * - an epigraph: a blockquote line, a line that is one italic quotation (`*"Miracles stayed proprietary."*`),
 *   or a line that is one italic span and nothing else (a tagline: `*Always one tentacle ahead*`);
 * - a list of links: a line that, without its links (wikilinks, embeds, markdown links), bare URLs
 *   (`https://…`, `www.…`), Obsidian tags (`#harbor-power`), list marker, field label and punctuation, has
 *   fewer than three words of its own;
 * - a navigation line: one that opens (after a list marker or bold/italic markup) with a cross-reference
 *   phrase ({@link NAVIGATION_PHRASES}: "See also", "Cf.", "Further reading", "Back to", "More at" …) or
 *   label ({@link NAVIGATION_LABELS}, followed by `:`: "See:", "Related:", "Up:", "Next:", "Sources:" …) —
 *   the wording of Wikipedia's "See also" sections (MOS:SEEALSO) and of Obsidian map-of-content notes: it
 *   points at other pages and states no lore;
 * - a metadata field line (`**Date:** 2719-2724`, Dataview `Label:: value`).
 *
 * Sentences (`opensWithReference`): a sentence that opens with a word pointing back to text before it
 * cannot start an excerpt on its own — "Instead the action spread…", "They know the service arteries…",
 * "Its major institutions…", "Second, competing jurisdictional claims…". The cues are the two cohesive ties
 * of Halliday & Hasan, *Cohesion in English* (1976) that need a preceding sentence: *reference* — a
 * sentence-initial personal, possessive or demonstrative pronoun or determiner ({@link REFERENCE_OPENERS}) —
 * and *conjunction* — a sentence-initial discourse connective, taken from the explicit connectives of the
 * Penn Discourse TreeBank 2.0 annotation manual (Prasad et al. 2007) that relate a sentence to the previous
 * one, and the additive focus particle "Even" ({@link CONNECTIVE_OPENERS}); an enumeration ordinal set off
 * by a comma ({@link ORDINAL_OPENERS}: "First, infrastructure sabotage…"); and a sentence-initial
 * preposition whose object is a demonstrative ({@link PREPOSITIONS}: "During this period…", "In this way…");
 * and a definite noun phrase whose head is a shell noun with nothing after it to fill it ("The answer was a
 * shared shell…", "The result is a world…": {@link RELATIONAL_SHELL_NOUNS}, {@link CONTENT_SHELL_NOUNS}) —
 * Halliday & Hasan's *general nouns* as cohesive reference, Schmid's anaphoric shell nouns (*English
 * Abstract Nouns as Conceptual Shells*, 2000). "There is …" (existential), "The …" with any other head (a
 * definite description: "The guild settles…"), a shell noun with its own post-modifier ("The answer to
 * the drift was…", "The lesson of the era…") and the `It` of an extraposition or cleft ("It is said that…")
 * are not cues.
 */

/** What a line of a note is, for excerpt picking (see the module rules). */
export type ExcerptLineKind = 'content' | 'list_item' | 'blank' | 'heading' | 'epigraph' | 'link_list' | 'navigation' | 'field' | 'rule';

const HEADING_RE = /^ {0,3}#{1,6}(?:\s|$)/;
const SETEXT_RE = /^ {0,3}(?:=+|-+)\s*$/;
const RULE_RE = /^ {0,3}(?:(?:\*\s*){3,}|(?:_\s*){3,})$/;
const BLOCKQUOTE_RE = /^ {0,3}>/;
/** One italic quotation on a line: `*"…"*`, `_"…"_`, also with curly quotes and a trailing attribution dash. */
const ITALIC_QUOTE_RE = /^\s*[*_]+\s*["“'‘].*["”'’]\s*[*_]+\s*(?:[—–-].*)?$/;
/** A line that is one italic span and nothing else (`*Always one tentacle ahead*`): a tagline or motto. */
const ITALIC_LINE_RE = /^\s*([*_])(?!\1)(?:(?!\1).)+\1\s*$/;
const LINK_RE = /!?\[\[[^\]\n]*(?:\][^\]\n]+)*\]\]|\[[^\]\n]*\]\([^)\n]*\)/g;
/** A bare URL (scheme or `www.`), up to the next white space. */
const URL_RE = /\b(?:[a-z][a-z0-9+.-]*:\/\/|www\.)\S+/gi;
/** An Obsidian tag: `#` then letters, digits, `_`, `-`, `/`, at the start or after white space. */
const TAG_RE = /(^|\s)#[\p{L}\p{N}_/-]+/gu;
const LIST_MARKER_RE = /^\s*(?:[-*+]|\d+[.)])\s+/;
const FIELD_LABEL_RE = /^\s*\*\*[^*]+:\*\*|^\s*[A-Za-z][\w /-]{0,40}::/;
/** A metadata field line: `**Label:** value` (Aetheria's event notes), or a Dataview-style `Label:: value`. */
const FIELD_LINE_RE = /^\s*(?:[-*+]\s+)?(?:\*\*[^*]{1,40}:\*\*|[A-Za-z][\w /-]{0,40}::)/;

/**
 * Cross-reference phrases that open a navigation line whatever follows them (compared case-insensitively,
 * on whole words, after a list marker and leading `*`/`_` markup).
 */
export const NAVIGATION_PHRASES: readonly string[] = [
  'see also', 'cf.', 'further reading', 'back to', 'return to', 'for more on', 'for more information', 'for details see', 'more at',
];

/** Cross-reference labels that open a navigation line only as a label, i.e. followed by `:` ("See: …", "Next: [[B]]"). */
export const NAVIGATION_LABELS: readonly string[] = [
  'see', 'compare', 'related', 'related notes', 'related pages', 'up', 'next', 'previous', 'prev', 'index', 'links', 'sources', 'references', 'tags',
];

/** A navigation cue at the start of `rest` (already stripped of marker and markup). */
function startsWithNavigationCue(rest: string): boolean {
  const lower = rest.toLowerCase().replace(/\*+/g, '');
  const phrase = NAVIGATION_PHRASES.some((cue) => lower.startsWith(cue) && (cue.endsWith('.') || !/[\p{L}\p{N}]/u.test(lower.charAt(cue.length))));
  return phrase || NAVIGATION_LABELS.some((cue) => lower.startsWith(cue) && /^\s*:/.test(lower.slice(cue.length)));
}

/** The line's own words: without links, URLs, tags, list marker and field label. */
function ownWords(line: string): string[] {
  const own = line
    .replace(LINK_RE, ' ')
    .replace(URL_RE, ' ')
    .replace(TAG_RE, ' ')
    .replace(LIST_MARKER_RE, ' ')
    .replace(FIELD_LABEL_RE, ' ');
  return own.split(/[^\p{L}\p{N}'’-]+/u).filter((w) => /[\p{L}\p{N}]/u.test(w));
}

/**
 * Classify one line of a note (see the module rules). A field line such as
 * `**Primary actors:** [[BioElevate]], uplift workers, [[Aeronautics Unlimited]]` is a `link_list`: without
 * its links and label only "uplift workers" is left. `See also the public notice board at
 * https://example.org/tidewater and the tag #harbor-power.` is `navigation`.
 */
export function excerptLineKind(line: string): ExcerptLineKind {
  if (line.trim() === '') return 'blank';
  if (HEADING_RE.test(line) || SETEXT_RE.test(line)) return 'heading';
  if (RULE_RE.test(line)) return 'rule';
  if (BLOCKQUOTE_RE.test(line) || ITALIC_QUOTE_RE.test(line) || ITALIC_LINE_RE.test(line)) return 'epigraph';
  const bare = line.replace(LIST_MARKER_RE, '').replace(/^[\s*_]+/, '');
  if (startsWithNavigationCue(bare)) return 'navigation';
  LINK_RE.lastIndex = 0;
  URL_RE.lastIndex = 0;
  TAG_RE.lastIndex = 0;
  const pointers = LINK_RE.test(line) || URL_RE.test(line) || TAG_RE.test(line);
  LINK_RE.lastIndex = 0;
  URL_RE.lastIndex = 0;
  TAG_RE.lastIndex = 0;
  if (pointers && ownWords(line).length < 3) return 'link_list';
  if (FIELD_LINE_RE.test(line)) return 'field';
  return LIST_MARKER_RE.test(line) ? 'list_item' : 'content';
}

/** True for the kinds an excerpt may contain (`content`, `list_item`). */
export function isExcerptable(kind: ExcerptLineKind): boolean {
  return kind === 'content' || kind === 'list_item';
}

/**
 * Lines of a note that list links and lines that carry lore, the two counts {@link isHubNote} compares:
 * `link_list` lines, and `content` plus `list_item` lines.
 */
export function hubLineCounts(lines: readonly string[]): { link_lines: number; lore_lines: number } {
  let link = 0;
  let lore = 0;
  for (const line of lines) {
    const kind = excerptLineKind(line);
    if (kind === 'link_list') link++;
    else if (isExcerptable(kind)) lore++;
  }
  return { link_lines: link, lore_lines: lore };
}

/**
 * True for a hub note — a map of content (Obsidian's MOC, a folder's `index` note): at least twice as many
 * lines that list links as lines that carry lore ({@link hubLineCounts}), and at least two of them. A
 * paragraph is one line and a list entry is one line, so a note that exists to point at other notes lists
 * link after link beside a paragraph or two of framing (Aetheria's `Factions/index.md`: 20 link lines, 2
 * lore lines), while a lore note's field lines (`**Primary actors:** [[A]], [[B]]`) are one or two beside
 * its paragraphs. `lines` are the note's lines (or its chunks' lines, in order).
 */
export function isHubNote(lines: readonly string[]): boolean {
  const { link_lines, lore_lines } = hubLineCounts(lines);
  return link_lines >= 2 && link_lines >= 2 * lore_lines;
}

/**
 * Sentence-initial words that refer back (Halliday & Hasan's *reference*): personal, possessive and
 * demonstrative pronouns and determiners, and a few anaphoric noun phrases. Compared with the sentence's
 * first word(s), case-insensitively.
 */
export const REFERENCE_OPENERS: readonly string[] = [
  'it', 'its', "it's", 'they', 'them', 'their', 'theirs', 'he', 'him', 'his', 'she', 'her', 'hers',
  'this', 'that', 'these', 'those', 'such', 'both', 'others', 'another', 'the latter', 'the former',
  'the same', 'each of them', 'all of them', 'none of them', 'one of them',
];

/**
 * Sentence-initial discourse connectives that relate a sentence to the previous one (Halliday & Hasan's
 * *conjunction*; the sentence-initial explicit connectives of the Penn Discourse TreeBank 2.0), and the
 * enumeration ordinals ("Second, …" continues a "First, …" before it), and "Even" (an additive focus
 * particle: "Even X …" contrasts X with what came before).
 */
export const CONNECTIVE_OPENERS: readonly string[] = [
  'instead', 'however', 'but', 'yet', 'and', 'or', 'nor', 'so', 'also', 'moreover', 'furthermore', 'further',
  'additionally', 'in addition', 'besides', 'meanwhile', 'thus', 'therefore', 'hence', 'consequently',
  'accordingly', 'as a result', 'still', 'nonetheless', 'nevertheless', 'even so', 'otherwise', 'likewise',
  'similarly', 'conversely', 'by contrast', 'in contrast', 'on the other hand', 'rather', 'alternatively',
  'then', 'later', 'afterward', 'afterwards', 'after that', 'by then', 'since then', 'until then',
  'in turn', 'indeed', 'in fact', 'for example', 'for instance', 'in particular', 'at the same time',
  'finally', 'lastly', 'next', 'firstly', 'first of all', 'secondly', 'thirdly', 'to begin with', 'even',
];

/**
 * Enumeration ordinals, connectives only when set off by a comma: `First, …` is the first item of an
 * enumeration its lead-in announced ("The guild settles quarrels in three steps."), `Second, …` continues
 * a `First, …`; but `First contact …`, `Second Compact War …` and `Third Ring …` are noun phrases that
 * stand alone.
 */
export const ORDINAL_OPENERS: readonly string[] = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth', 'last'];

/**
 * Prepositions (simple and complex) that open a sentence-initial adverbial; followed by a demonstrative
 * (`this`, `that`, `these`, `those`, `such`) the phrase refers back (Halliday & Hasan's demonstrative
 * reference inside a connective phrase, the PDTB's "alternative lexicalizations": `After that, …`,
 * `Because of this, …`, `During this period, …`, `In this way, …`, `At this point …`, `For that reason …`).
 */
export const PREPOSITIONS: readonly string[] = [
  'about', 'after', 'against', 'along with', 'amid', 'among', 'apart from', 'as a result of', 'as of', 'aside from',
  'at', 'because of', 'before', 'besides', 'beyond', 'by', 'despite', 'due to', 'during', 'following', 'for',
  'from', 'given', 'in', 'in addition to', 'in response to', 'in spite of', 'into', 'like', 'on', 'owing to',
  'over', 'since', 'thanks to', 'through', 'throughout', 'to', 'under', 'unlike', 'until', 'upon', 'with',
  'within', 'without',
];

/**
 * Relational shell nouns (Schmid 2000: a result is always the result *of* something, an answer the answer
 * *to* something): in a sentence-initial `The <noun>` without a post-modifier that names that something
 * (`of`, `to`, `for`, … — {@link SHELL_POST_MODIFIERS}) it is in the text before, so the sentence points back
 * ("The answer was a shared shell…" answers the question of the sentence before it).
 */
export const RELATIONAL_SHELL_NOUNS: readonly string[] = [
  'answer', 'response', 'reply', 'reaction', 'solution', 'remedy', 'result', 'outcome', 'consequence', 'effect',
  'upshot', 'aftermath', 'cause', 'price', 'cost',
];

/**
 * Content shell nouns (Schmid 2000: a question, a problem, an idea whose content the text supplies): a
 * sentence-initial `The <noun>` points back unless a post-modifier follows the noun ("The question of
 * water…") or the copula introduces its content right away — a `that`/`wh-`/`to` clause or a colon ("The
 * problem is that…", "The question was whether…": Schmid's cataphoric N-be-clause pattern).
 */
export const CONTENT_SHELL_NOUNS: readonly string[] = [
  'question', 'problem', 'issue', 'idea', 'point', 'fact', 'goal', 'aim', 'purpose', 'distinction', 'difference',
  'lesson', 'argument', 'decision', 'move', 'step', 'plan', 'attempt', 'compromise', 'arrangement', 'bargain',
  'deal', 'premise', 'assumption', 'belief', 'claim', 'conclusion', 'danger', 'risk', 'irony', 'paradox',
  'trouble', 'difficulty', 'shift', 'change', 'situation',
];

/**
 * Words that open a shell noun's post-modifier (a prepositional phrase or a relative or content clause):
 * after one the noun phrase names its own content or referent and stands alone.
 */
export const SHELL_POST_MODIFIERS: readonly string[] = [
  'of', 'to', 'for', 'from', 'over', 'about', 'behind', 'between', 'among', 'against', 'with', 'within', 'in', 'on',
  'at', 'by', 'under', 'into', 'toward', 'towards', 'beyond', 'across', 'through', 'that', 'which', 'who', 'whose',
  'whether', 'where', 'when', 'why', 'how',
];

const SHELL_HEAD_RE = new RegExp(`^[Tt]he\\s+(${[...RELATIONAL_SHELL_NOUNS, ...CONTENT_SHELL_NOUNS].join('|')})s?(?![\\p{L}\\p{N}'’-])\\s*([\\s\\S]*)$`, 'u');
const CONTENT_CLAUSE_RE = /^(?:is|was|are|were|remains|remained)\s+(?:(?:not|simply|still)\s+)?(?:that|whether|what|how|why|who|where|when|to)(?![\p{L}\p{N}])|^(?:is|was|are|were)?\s*:/u;

/**
 * True when `bare` (a sentence without leading markup) opens with `The <shell noun>` that refers back (see
 * {@link RELATIONAL_SHELL_NOUNS} and {@link CONTENT_SHELL_NOUNS}). The noun must be written in lower case:
 * "The Answer Engine …" is a name.
 */
function opensWithShellNoun(bare: string): boolean {
  const m = SHELL_HEAD_RE.exec(bare);
  if (m === null) return false;
  const noun = m[1] as string;
  const rest = (m[2] as string).toLowerCase();
  const next = /^[\p{L}]+/u.exec(rest)?.[0] ?? '';
  if (SHELL_POST_MODIFIERS.includes(next)) return false;
  if (CONTENT_SHELL_NOUNS.includes(noun) && CONTENT_CLAUSE_RE.test(rest)) return false;
  return true;
}

const OPENERS = [...REFERENCE_OPENERS, ...CONNECTIVE_OPENERS].sort((a, b) => b.length - a.length);

const escapeRe = (w: string): string => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const ORDINAL_RE = new RegExp(`^(?:${ORDINAL_OPENERS.map(escapeRe).join('|')})\\s*,`, 'u');
const DEMONSTRATIVE_PHRASE_RE = new RegExp(`^(?:${[...PREPOSITIONS].sort((a, b) => b.length - a.length).map(escapeRe).join('|')})\\s+(?:this|that|these|those|such)(?![\\p{L}\\p{N}])`, 'u');

/**
 * `It` in an extraposition or cleft — `It is said that …`, `It was here that …`, `It is widely believed
 * that …` — is a placeholder for the clause that follows, not a reference back: the copula or a raising
 * verb, an optional `not`/`also` and `-ly` adverb, one word that is not a determiner, then `that` or
 * `whether`. (`It is a port that …` has a determiner: the `that` is a relative pronoun and `It` refers
 * back. An `It is … to …` infinitive is not told apart from a purpose clause, `It was built to …`, so it
 * counts as a reference: the safe side, since a window that only might point back loses nothing but rank.)
 */
const EXTRAPOSED_IT_RE = /^it\s+(?:is|was|has been|had been|seems|seemed|appears|appeared|remains|remained)\s+(?:(?:not|also)\s+)?(?:\p{L}+ly\s+)?(?!(?:a|an|the|this|that|these|those|its|their|his|her|our|one|some|no)\s)[\p{L}-]+\s+(?:that|whether)(?![\p{L}\p{N}])/u;

/**
 * True when `sentence` opens with a word that points back to text before it ({@link REFERENCE_OPENERS},
 * {@link CONNECTIVE_OPENERS}, an {@link ORDINAL_OPENERS} entry followed by `,`, one of the
 * {@link PREPOSITIONS} followed by `this`/`that`/`these`/`those`/`such`, `The` and a shell noun with
 * nothing after it to fill it: "The answer was …"), unless it is an extraposed or
 * cleft `It` (`It is said that …`): list marker, leading markup (`*`, `_`, quotes, brackets) and white
 * space are skipped, then the opener must be followed by a non-letter (so "Thesis" or "Itself" is not
 * "This"/"It").
 */
export function opensWithReference(sentence: string): boolean {
  const bare = sentence.replace(LIST_MARKER_RE, '').replace(/^[\s*_"“'‘([]+/u, '');
  const lower = bare.toLowerCase();
  if (EXTRAPOSED_IT_RE.test(lower)) return false;
  if (ORDINAL_RE.test(lower) || DEMONSTRATIVE_PHRASE_RE.test(lower) || opensWithShellNoun(bare)) return true;
  return OPENERS.some((w) => lower.startsWith(w) && !/[\p{L}\p{N}]/u.test(lower.charAt(w.length)));
}
