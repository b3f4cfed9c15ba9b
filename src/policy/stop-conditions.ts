/**
 * `stop_conditions` grammar: structured tokens and plain-English patterns.
 *
 * A clause with no whitespace that starts with `name:` is a **structured token**; an unknown name or a
 * bad value is a fatal `bad_policy` error (a typo must not silently widen a walk):
 *
 * | token | meaning |
 * | --- | --- |
 * | `max_refs:N` | consult at most N notes (seeds included), N ≥ 1 |
 * | `max_chunks:N` | at most N source excerpts, N ≥ 1 |
 * | `max_chars:N` | at most N characters (UTF-16 code units) of excerpt text in total, N ≥ 1 |
 * | `min_relevance:X` | the evidence floor: skip a link target when neither it nor a passage linking it has relevance ≥ X, 0 ≤ X ≤ 1 (default {@link DEFAULT_MIN_RELEVANCE}; 0 turns it off) |
 * | `min_relative_relevance:X` | end the walk when the best remaining candidate's score is < X × the best followed one's, 0 ≤ X ≤ 1 (default {@link DEFAULT_MIN_RELATIVE_RELEVANCE}; 0 turns the stop off) |
 * | `min_score_ratio:X` | end the walk when the best remaining candidate's score is < X × the score of the note followed just before, 0 ≤ X ≤ 1 (default {@link DEFAULT_MIN_SCORE_RATIO}; 0 turns the stop off) |
 * | `deny_prefix:P` | never enter prefix P (ref grammar: `Ns:folder/` or `folder/` or one note) |
 * | `deny_class:C` | never enter a note with target class C |
 * | `no_expand_class:C` | consult notes of class C but do not walk their links |
 * | `time_budget_ms:N` | stop after N wall-clock milliseconds |
 *
 * Anything else is **plain English**, matched case-insensitively against {@link STOP_PATTERNS}; every
 * pattern that matches contributes its rule. A clause no pattern matches is advisory.
 *
 * A pattern enforces only what it measures, so the rest of a matched clause is weighed too
 * ({@link unaccountedStopWords}): each pattern declares the words it accounts for (its template, and what its
 * enforcement measures — `not_relevant` measures relevance to the scene's own queries, so "the responder's
 * local action or material stakes" is accounted for, "Nara's labor grievances" is not), and any content word
 * left over, and any exception ("unless …", "except …") the pattern does not itself implement, is named in
 * the receipt as not enforced (`partially_enforced`), as a link-class phrase's dropped qualifiers are.
 */

import { phraseWords } from './synonyms.js';

/** What a stop condition compiles to. */
export type StopEffect =
  | { kind: 'max_refs'; value: number }
  | { kind: 'max_chunks'; value: number }
  | { kind: 'max_chars'; value: number }
  | { kind: 'min_relevance'; value: number }
  | { kind: 'min_relative_relevance'; value: number }
  | { kind: 'min_score_ratio'; value: number }
  | { kind: 'time_budget_ms'; value: number }
  | { kind: 'deny_prefix'; value: string }
  | { kind: 'deny_class'; value: string }
  | { kind: 'no_expand_class'; value: string }
  | { kind: 'deny_future_era' }
  | { kind: 'deny_hidden' };

/** A value quoted for a message, cut to 100 characters (a hostile clause can be megabytes long). */
function quote(v: string): string {
  return JSON.stringify(v.length > 100 ? v.slice(0, 99) + '…' : v);
}

/**
 * Relevance threshold used by "stop when a link is not relevant…", and the evidence floor every walk
 * applies unless `min_relevance:X` says otherwise (0..1; docs/TRAVERSAL.md "Stop rule"): the relative
 * stops compare candidates with what was followed, so without an absolute floor a scene that matches
 * little still fills its budget with the least weak matches.
 */
export const DEFAULT_MIN_RELEVANCE = 0.3;

/**
 * The relevance stop every walk applies unless `min_relative_relevance:X` says otherwise: the walk ends
 * when the best remaining candidate scores below this share of the best followed note's score, so a
 * `max_refs` budget is a ceiling, not a target (docs/TRAVERSAL.md "Stop rule").
 */
export const DEFAULT_MIN_RELATIVE_RELEVANCE = 0.35;

/**
 * The score-drop stop every walk applies unless `min_score_ratio:X` says otherwise: the walk ends when
 * the best remaining candidate scores below this share of the note followed just before it — a drop as
 * steep as one more hop of link decay (the walk's `LINK_DECAY`, 0.5) means the walk has passed from the
 * notes the scene's passages point at to the ones it merely reaches (docs/TRAVERSAL.md "Stop rule").
 */
export const DEFAULT_MIN_SCORE_RATIO = 0.5;

/** A documented plain-English pattern. `effects` receives the regex match. */
export interface StopPattern {
  id: string;
  /** Human-readable description for the receipt and docs. */
  description: string;
  regex: RegExp;
  /**
   * Match a clause: same result as `regex.exec(text)` for whether it matches, but linear in the
   * clause length (a `verb .* keyword` regex backtracks quadratically on a long hostile clause).
   */
  exec: (text: string) => RegExpExecArray | null;
  effects: (m: RegExpExecArray) => StopEffect[];
  /**
   * Words (lower-case, as {@link stopClauseWords} splits them) this pattern accounts for beyond the text its
   * match covers: its template's other spellings and what its enforcement actually measures.
   */
  accounts: readonly string[];
  /** An exception ("unless …") the pattern's enforcement implements, so it is not named as dropped. */
  exception?: RegExp;
}

const STOP_VERB = String.raw`(?:stop|avoid|exclude|skip|never|no|not|don't|do not|before|without|unless)`;
const STOP_VERB_RE = new RegExp(String.raw`\b${STOP_VERB}\b`, 'i');

/**
 * Linear equivalent of `/\bVERB\b.*\bKEYWORD\b/i` (`.` stops at line terminators): on each line, the
 * first stop verb, then the keyword anywhere after it. The verb ends in a word character and the
 * keyword starts with one, so searching the rest of the line after the verb keeps both `\b`s exact.
 */
function verbThenKeyword(keyword: RegExp): (text: string) => RegExpExecArray | null {
  return (text) => {
    for (const line of text.split(/[\n\r\u2028\u2029]/)) {
      const v = STOP_VERB_RE.exec(line);
      if (!v) continue;
      const k = keyword.exec(line.slice(v.index + v[0].length));
      if (k) return k;
    }
    return null;
  };
}
const FUTURE_KEYWORD_RE = /\b(?:post[-\s]?elysium|future(?:[-\s](?:outcome|era|branch|branches|lore|events?))?)\b/i;
const HIDDEN_KEYWORD_RE = /\b(?:author[-\s]?only|hidden|secret|secrets|spoilers?|gm[-\s]?only|private)\b/i;
const execOf = (re: RegExp) => (text: string): RegExpExecArray | null => re.exec(text);

/** Plain-English stop-condition patterns, in the order they are tried (all that match apply). */
export const STOP_PATTERNS: readonly StopPattern[] = Object.freeze<StopPattern[]>([
  {
    id: 'not_relevant',
    description: `"stop when a link is not relevant / irrelevant / unrelated …" → min_relevance:${DEFAULT_MIN_RELEVANCE}`,
    regex: /\b(?:not|isn't|is not|no longer)\s+(?:relevant|related)\b|\birrelevant\b|\bunrelated\b/i,
    exec: execOf(/\b(?:not|isn't|is not|no longer)\s+(?:relevant|related)\b|\birrelevant\b|\bunrelated\b/i),
    effects: () => [{ kind: 'min_relevance', value: DEFAULT_MIN_RELEVANCE }],
    // Relevance is measured against the walk's queries: the scene the packet shows the responder (its
    // observed event, its source excerpts, the projected context's requirements). Words naming that scene
    // or the responder's own situation are what it measures; a named topic is not.
    accounts: ['relevant', 'related', 'irrelevant', 'unrelated', 'longer', 'scene', 'scenes', 'responder', 'character', 'local', 'action', 'actions', 'situation',
      'material', 'stakes', 'institution', 'institutions', 'relationship', 'relationships', 'query', 'queries', 'requirement', 'requirements', 'context', 'turn', 'moment'],
  },
  {
    id: 'future_era',
    description: '"stop before post-Elysium / future-outcome / future-era lore …" → deny the future-era prefixes',
    regex: new RegExp(String.raw`\b${STOP_VERB}\b.*${FUTURE_KEYWORD_RE.source}`, 'i'),
    exec: verbThenKeyword(FUTURE_KEYWORD_RE),
    effects: () => [{ kind: 'deny_future_era' }],
    // Every future-era prefix is denied, whatever it is about; an allowed prefix inside one is the explicit
    // request the Ghostlight clause's exception names (docs/TRAVERSAL.md "Stop conditions").
    accounts: ['post-elysium', 'postelysium', 'post', 'elysium', 'future', 'future-outcome', 'future-era', 'future-branch', 'future-branches', 'future-lore', 'future-event', 'future-events',
      'outcome', 'outcomes', 'era', 'branch', 'branches', 'event', 'events'],
    exception: /^unless\s+(?:the\s+)?(?:packet|policy)\s+(?:explicitly\s+)?(?:requests?|asks?\s+for|allows?|names?)\s+(?:it|them)$/i,
  },
  {
    id: 'hidden',
    description: '"stop before author-only / hidden / secret / private / spoiler …" → deny hidden refs and hidden prefixes',
    regex: new RegExp(String.raw`\b${STOP_VERB}\b.*${HIDDEN_KEYWORD_RE.source}`, 'i'),
    exec: verbThenKeyword(HIDDEN_KEYWORD_RE),
    effects: () => [{ kind: 'deny_hidden' }],
    // Hidden lore is what the packet's hidden_context_audit, the config and the notes' own markers hide from
    // this character; the words Ghostlight uses for what such lore holds are accounted for.
    accounts: ['author-only', 'hidden', 'secret', 'secrets', 'spoiler', 'spoilers', 'gm-only', 'private', 'plot', 'resolution', 'resolutions',
      'incident', 'truth', 'truths', 'twist', 'twists', 'reveal', 'reveals', 'visible', 'character', 'responder'],
  },
  {
    id: 'max_refs',
    description: '"… at most / no more than / after N notes|refs|documents|docs|files|pages" → max_refs:N',
    regex: /\b(?:at most|no more than|up to|after|max(?:imum)?(?: of)?)\s+([1-9][0-9]*)\s+(?:refs?|notes?|documents?|docs?|files?|pages?)\b/i,
    exec: execOf(/\b(?:at most|no more than|up to|after|max(?:imum)?(?: of)?)\s+([1-9][0-9]*)\s+(?:refs?|notes?|documents?|docs?|files?|pages?)\b/i),
    effects: (m) => [{ kind: 'max_refs', value: Number(m[1]) }],
    accounts: ['refs', 'ref', 'notes', 'documents', 'docs', 'files', 'pages', 'consulted'],
  },
  {
    id: 'max_chunks',
    description: '"… at most / no more than / after N excerpts|chunks|passages" → max_chunks:N',
    regex: /\b(?:at most|no more than|up to|after|max(?:imum)?(?: of)?)\s+([1-9][0-9]*)\s+(?:excerpts?|chunks?|passages?)\b/i,
    exec: execOf(/\b(?:at most|no more than|up to|after|max(?:imum)?(?: of)?)\s+([1-9][0-9]*)\s+(?:excerpts?|chunks?|passages?)\b/i),
    effects: (m) => [{ kind: 'max_chunks', value: Number(m[1]) }],
    accounts: ['excerpts', 'excerpt', 'chunks', 'chunk', 'passages', 'passage'],
  },
  {
    id: 'max_chars',
    description: '"… at most / no more than N characters|chars" → max_chars:N',
    regex: /\b(?:at most|no more than|up to|after|max(?:imum)?(?: of)?)\s+([1-9][0-9]*)\s+(?:characters?|chars?)\b/i,
    exec: execOf(/\b(?:at most|no more than|up to|after|max(?:imum)?(?: of)?)\s+([1-9][0-9]*)\s+(?:characters?|chars?)\b/i),
    effects: (m) => [{ kind: 'max_chars', value: Number(m[1]) }],
    accounts: ['characters', 'chars', 'excerpt', 'text'],
  },
]);

/** The structured token names. */
export const STOP_TOKENS = [
  'max_refs', 'max_chunks', 'max_chars', 'min_relevance', 'min_relative_relevance', 'min_score_ratio', 'deny_prefix', 'deny_class', 'no_expand_class', 'time_budget_ms',
] as const;

/** Result of parsing one stop condition. */
export type ParsedStopCondition =
  | { form: 'token'; effects: StopEffect[] }
  | { form: 'english'; effects: StopEffect[]; patterns: string[]; dropped: string[]; exceptions: string[] }
  | { form: 'unrecognised'; effects: [] }
  | { form: 'bad_token'; error: string; expected: string };

/**
 * True when a clause is a structured token: `name:value` where `name` is a known token name (the value
 * may then contain spaces, as paths do), or any `name:value` without whitespace (an unknown name there
 * is an error, not English).
 */
export function looksLikeToken(clause: string): boolean {
  const m = /^([A-Za-z][A-Za-z0-9_]*):/.exec(clause);
  if (!m) return false;
  return (STOP_TOKENS as readonly string[]).includes(m[1]!) || !/\s/.test(clause);
}

/**
 * Parse one stop condition. Never throws; a malformed token is returned as `bad_token` with the
 * reason so the compiler can raise `bad_policy` with the clause's pointer.
 */
export function parseStopCondition(clause: string): ParsedStopCondition {
  const text = clause.normalize('NFC').trim();
  if (looksLikeToken(text)) {
    const colon = text.indexOf(':');
    const name = text.slice(0, colon);
    const value = text.slice(colon + 1);
    const intToken = (kind: 'max_refs' | 'max_chunks' | 'max_chars' | 'time_budget_ms'): ParsedStopCondition =>
      /^[1-9][0-9]*$/.test(value) && Number.isSafeInteger(Number(value))
        ? { form: 'token', effects: [{ kind, value: Number(value) }] }
        : { form: 'bad_token', error: `${name} needs a whole number ≥ 1 (got ${quote(value)})`, expected: `${name}:N with N ≥ 1` };
    switch (name) {
      case 'max_refs':
      case 'max_chunks':
      case 'max_chars':
      case 'time_budget_ms':
        return intToken(name);
      case 'min_relevance':
      case 'min_relative_relevance':
      case 'min_score_ratio': {
        const x = Number(value);
        if (!/^(?:0|1|0?\.[0-9]+|1\.0+|0\.[0-9]*)$/.test(value) || !(x >= 0 && x <= 1)) {
          return { form: 'bad_token', error: `${name} needs a number from 0 to 1 (got ${quote(value)})`, expected: `${name}:X with 0 ≤ X ≤ 1` };
        }
        return { form: 'token', effects: [{ kind: name, value: x }] };
      }
      case 'deny_prefix':
      case 'deny_class':
      case 'no_expand_class':
        if (value.length === 0) return { form: 'bad_token', error: `${name} needs a value`, expected: `${name}:VALUE` };
        return { form: 'token', effects: [{ kind: name, value }] };
      default:
        return {
          form: 'bad_token',
          error: `unknown structured token ${quote(name)}`,
          expected: `one of ${STOP_TOKENS.join(', ')} (or a plain-English sentence)`,
        };
    }
  }
  const effects: StopEffect[] = [];
  const patterns: string[] = [];
  const matched: { pattern: StopPattern; match: string }[] = [];
  for (const p of STOP_PATTERNS) {
    const m = p.exec(text);
    if (m) {
      patterns.push(p.id);
      effects.push(...p.effects(m));
      matched.push({ pattern: p, match: m[0] });
    }
  }
  if (effects.length === 0) return { form: 'unrecognised', effects: [] };
  const huge = effects.find((e) => 'value' in e && typeof e.value === 'number' && !Number.isSafeInteger(e.value) && e.kind !== 'min_relevance' && e.kind !== 'min_relative_relevance' && e.kind !== 'min_score_ratio');
  if (huge) {
    return { form: 'bad_token', error: `${huge.kind} needs a whole number ≥ 1 no larger than ${Number.MAX_SAFE_INTEGER}`, expected: `${huge.kind} N with 1 ≤ N ≤ ${Number.MAX_SAFE_INTEGER}` };
  }
  return { form: 'english', effects, patterns, ...unaccountedStopWords(text, matched) };
}

/**
 * Words every stop clause may use without qualifying it: function words, the stop verbs, and words naming
 * what a walk does or touches ("follow", "link", "lore", "note") — a rule on the walk satisfies them by
 * construction. `only` and `more` are not here: they restrict or widen a clause.
 */
export const STOP_CLAUSE_WORDS: ReadonlySet<string> = new Set([
  'a', 'an', 'the', 'and', 'or', 'nor', 'of', 'with', 'that', 'which', 'who', 'whose', 'to', 'in', 'on', 'for', 'by', 'from', 'at', 'as', 'into', 'about', 'its', 'their', 'his', 'her', 'this', 'these', 'those', 'it', 'they', 'them',
  'is', 'are', 'be', 'been', 'being', 'was', 'were', 'isn', 'aren', 't', 'do', 'does', 'don', 'doesn', 'any', 'every', 'each', 'all', 'once', 'when', 'whenever', 'then', 'than', 'there',
  'stop', 'stops', 'stopping', 'avoid', 'exclude', 'skip', 'never', 'no', 'not', 'before', 'without', 'after', 'at', 'most', 'up', 'max', 'maximum',
  'follow', 'follows', 'following', 'followed', 'consult', 'consulting', 'walk', 'walking', 'read', 'reading', 'enter', 'entering', 'open', 'opening', 'visit', 'visiting',
  'link', 'links', 'linked', 'referenced', 'target', 'targets', 'doc', 'docs', 'document', 'documents', 'note', 'notes', 'page', 'pages', 'file', 'files', 'lore', 'entry', 'entries',
]);

/** Words that open an exception to a clause: what follows them, to the end of the sentence, is a condition. */
const EXCEPTION_RE = /\b(?:unless|except(?:ing)?|other\s+than|save\s+for|apart\s+from|but\s+not)\b[^.;!?\n\r\u2028\u2029]*/gi;

/**
 * Words of a stop clause, as the receipt names them: lower-case, NFC, possessive `'s` dropped, split on
 * anything but letters, digits and hyphens (src/policy/synonyms.ts `phraseWords`, the link-class rule).
 */
export function stopClauseWords(text: string): string[] {
  return phraseWords(text);
}

/**
 * What a matched plain-English clause says that its patterns do not enforce.
 * - `exceptions`: each "unless …" / "except …" / "other than …" / "save for …" / "apart from …" / "but not …"
 *   span (to the end of its sentence, whitespace collapsed) that no matched pattern implements (only
 *   `future_era`'s "unless the packet explicitly requests it" is implemented, by allowed prefixes inside
 *   a future-era folder); a walk rule applies in every case, so such an exception is never enforced.
 * - `dropped`: every other word, in clause order and once, that is not a {@link STOP_CLAUSE_WORDS} word,
 *   not inside a matched pattern's match, not a number, and not in a matched pattern's `accounts`.
 * Linear in the clause length. Both lists empty ⇒ the clause is enforced as far as its patterns are.
 */
export function unaccountedStopWords(text: string, matched: readonly { pattern: StopPattern; match: string }[]): { dropped: string[]; exceptions: string[] } {
  const exceptions: string[] = [];
  const kept: string[] = [];
  let at = 0;
  for (const m of text.matchAll(EXCEPTION_RE)) {
    const span = m[0].replace(/\s+/g, ' ').trim().replace(/[,\s]+$/, '');
    kept.push(text.slice(at, m.index));
    at = m.index + m[0].length;
    if (!matched.some(({ pattern }) => pattern.exception?.test(span))) exceptions.push(span.length > 100 ? span.slice(0, 99) + '…' : span);
  }
  kept.push(text.slice(at));
  const rest = kept.join(' ');
  const accounted = new Set<string>(STOP_CLAUSE_WORDS);
  for (const { pattern, match } of matched) {
    for (const w of pattern.accounts) accounted.add(w);
    for (const w of stopClauseWords(match)) accounted.add(w);
  }
  const dropped: string[] = [];
  const seen = new Set<string>();
  for (const w of stopClauseWords(rest)) {
    if (seen.has(w)) continue;
    seen.add(w);
    if (!accounted.has(w) && !/^[0-9]+$/.test(w)) dropped.push(w);
  }
  return { dropped, exceptions: [...new Set(exceptions)] };
}
