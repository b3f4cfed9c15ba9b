/**
 * Cross-field rules of the Ghostlight packet and capture contracts — the rules a JSON Schema cannot say.
 * Each rule has a stable id (listed in {@link VALIDATION_RULES} and docs/VALIDATE.md) and cites the sentence of
 * seed 000/001 (or Ghostlight's hand-written validators, tools/validate_responder_*.py) it comes from.
 *
 * Every rule guards its inputs: it fires only when the fields it compares have the shape the schema demands
 * (a value the schema already rejects — wrong type, unknown enum member — is reported once, by the schema).
 * Rules are pure except the `ref.*` rules, which test the file system and run only when a `root` is given.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import type { DocumentKind, ValidationIssue } from './types.js';
import { isJsonObject } from './json-object.js';

/** A row of the rule table: id, the document kinds it applies to, what it means, and where it comes from. */
export interface ValidationRule {
  id: string;
  kinds: DocumentKind[];
  meaning: string;
  source: string;
}

const SEED000 = 'seed 000 (Ghostlight schemas/responder-packet.schema.json)';
const LANES = 'seed 001, Generation Lanes / Training Use';

/**
 * Every rule id the validators emit, schema-level ones included, in documentation order.
 * Schema-level ids are `schema.<keyword>`; an ajv keyword not listed here would appear as `schema.<keyword>`
 * too, but none of the four document schemas (three contracts + capture fragment) uses another keyword.
 */
export const VALIDATION_RULES: readonly ValidationRule[] = [
  { id: 'schema.required', kinds: ['packet', 'capture', 'projected-context', 'capture-fragment'], meaning: 'A required property is missing (pointer = the missing property).', source: 'contract JSON Schemas, `required`' },
  { id: 'schema.additional_property', kinds: ['packet', 'capture', 'projected-context', 'capture-fragment'], meaning: 'A property the contract does not define (pointer = that property). Not reported with --lenient (then a warning `lenient.ignored_property`).', source: 'contract JSON Schemas, `additionalProperties: false`' },
  { id: 'schema.type', kinds: ['packet', 'capture', 'projected-context', 'capture-fragment'], meaning: 'A value has the wrong JSON type.', source: 'contract JSON Schemas, `type`' },
  { id: 'schema.enum', kinds: ['packet', 'capture', 'projected-context', 'capture-fragment'], meaning: 'A value is not one of the allowed values (lanes, modes, statuses, ...).', source: 'contract JSON Schemas, `enum`' },
  { id: 'schema.const', kinds: ['packet', 'capture', 'projected-context', 'capture-fragment'], meaning: 'A value differs from the one value allowed (`schema_version`, `required_provenance: true`, `packet_only: true`, ...).', source: 'contract JSON Schemas, `const`' },
  { id: 'schema.min_length', kinds: ['packet', 'capture', 'projected-context', 'capture-fragment'], meaning: 'An empty string where at least one character is required.', source: 'contract JSON Schemas, `minLength: 1`' },
  { id: 'schema.min_items', kinds: ['packet', 'capture', 'projected-context'], meaning: 'An empty array where at least one item is required.', source: 'contract JSON Schemas, `minItems: 1`' },
  { id: 'schema.minimum', kinds: ['packet', 'capture', 'capture-fragment'], meaning: 'A number below its minimum (`max_link_depth` ≥ 0, `chunk_index` ≥ 0, `line_start`/`line_end` ≥ 1).', source: 'contract JSON Schemas, `minimum`' },
  { id: 'schema.pattern', kinds: ['capture-fragment'], meaning: 'A string does not match its pattern (a fragment\'s `ledger_head` must be 64 lower-case hex digits).', source: 'schemas/capture-fragment.schema.json, `pattern`' },
  { id: 'schema.one_of', kinds: ['capture'], meaning: 'An update candidate that is neither a non-empty string nor an object with a non-empty string `value`.', source: 'Ghostlight schemas/responder-output.schema.json, `$defs/update_candidate`' },
  { id: 'lane.packet_only_requires_curated_excerpts', kinds: ['packet', 'capture'], meaning: '`generation_lane: packet_only` requires `lore_access.mode: curated_excerpts_only`.', source: `${LANES}: "packet_only ... does not search the lore archive"; Ghostlight validate_responder_*.py` },
  { id: 'lane.retrieval_augmented_requires_scoped_mode', kinds: ['packet', 'capture'], meaning: '`generation_lane: retrieval_augmented` requires mode `coordinator_scoped_retrieval` or `responder_scoped_repository_search`.', source: `${LANES}: "There are two retrieval-augmented modes"` },
  { id: 'lane.responder_search_requires_allowed_scope', kinds: ['packet'], meaning: '`responder_scoped_repository_search` requires a non-empty `lore_access.allowed_scope`.', source: 'seed 001: "The packet must include a Required Lore Research section, allowed_scope, and research_instructions."' },
  { id: 'lane.responder_search_requires_research_instructions', kinds: ['packet'], meaning: '`responder_scoped_repository_search` requires a non-empty `lore_access.research_instructions`.', source: 'seed 001: "The packet must include ... research_instructions."' },
  { id: 'lane.responder_search_requires_traversal_policy', kinds: ['packet'], meaning: '`responder_scoped_repository_search` requires `lore_access.traversal_policy`.', source: 'seed 001, Packet Contents: "traversal_policy: for responder-scoped research, the permitted link depth, allowed repo prefixes, ..."' },
  { id: 'isolation.responder_search_requires_repo_access', kinds: ['packet'], meaning: '`responder_scoped_repository_search` requires `isolation_requirements.no_repo_access: false`.', source: 'seed 001, Training Use: "unless the artifact uses responder_scoped_repository_search, sets no_repo_access to false, ..."' },
  { id: 'isolation.requires_no_repo_access', kinds: ['packet'], meaning: 'Every other mode requires `isolation_requirements.no_repo_access: true`.', source: 'seed 001: "The responder itself should not receive repo access unless ..."; "coordinator_scoped_retrieval: ... The responder has no repo access."' },
  { id: 'prompt.missing_research_section', kinds: ['packet'], meaning: 'For `responder_scoped_repository_search`, `packet_prompt_text` must contain `## Required Lore Research`.', source: 'seed 001: "The packet must include a Required Lore Research section"; "includes visible research instructions in the prompt"' },
  { id: 'prompt.missing_allowed_scope', kinds: ['packet'], meaning: 'For `responder_scoped_repository_search`, `packet_prompt_text` must contain every `allowed_scope` entry verbatim (one error per missing entry).', source: 'Ghostlight validate_responder_packets.py: "packet_prompt_text must include allowed research scope"' },
  { id: 'prompt.missing_allowed_prefix', kinds: ['packet'], meaning: 'For `responder_scoped_repository_search`, `packet_prompt_text` must contain every `traversal_policy.allowed_prefixes` entry verbatim (one error per missing prefix).', source: 'Ghostlight validate_responder_packets.py: "packet_prompt_text must include allowed traversal prefix"' },
  { id: 'prompt.missing_local_context', kinds: ['packet'], meaning: '`packet_prompt_text` must contain `visible_context.local_context_prompt` verbatim.', source: 'seed 001, Packet Contents: "packet_prompt_text: the exact prompt text sent to the responder"; "local_context_prompt: the projected character-local context"' },
  { id: 'prompt.missing_observed_action', kinds: ['packet'], meaning: '`packet_prompt_text` must contain `visible_context.observed_event.observable_action` verbatim.', source: 'seed 001, Packet Contents: "observed_event: what the character can see or hear from the prior action"' },
  { id: 'prompt.raw_state_marker', kinds: ['packet'], meaning: '`packet_prompt_text` contains a raw-state marker (`current_activation`, `plasticity`, `canonical_state`, `raw state variable`, `raw numeric state`, `dimension score`), compared ignoring case, white-space runs, format characters and compatibility forms (as retrieve does). One error per marker.', source: 'seed 001: "The packet prompt must not expose raw state internals such as current_activation, plasticity, raw dimension scores"' },
  { id: 'prompt.raw_numeric_state', kinds: ['packet'], meaning: '`packet_prompt_text` carries raw numeric state: a word, optionally followed by `dimension`, `score`, `level`, `value`, `weight` or `activation`, then a number from 0 to 1 written with a decimal point, directly or after `:`, `=`, `(`, `,`, a dash, `is`, `was`, `at`, `is at` or `of` (`fear 0.82`, `fear=0.82`, `Fear 0.8`, `trust dimension 0.77`, `Trust: .7`, `fear is 0.82`, `fear — 0.82`, `fear, 0.82`), or a percentage or mark out of 10 / 100 after `:`, `=` or a qualifier (`trust: 77%`, `loyalty: 7/10`, `fear score 82%`; a bare `achieved 85%` or `operated at 30%` is lore, not state), or a percentage after `is at` (`fear is at 82%`), or a bare mark n/d with d from 2 to 10 or 100 and n ≤ d (`fear 82/100`, `stress 3/5`); version numbers (`v0.1`, `0.1.2`, `version 0.5`), dates (`3/5/2893`, `since 3/5`), schedules (`24/7`), times, counts (`3 of 5 workers`) and `Deck 4` are not state. One error per occurrence.', source: 'seed 001: "The packet prompt must not expose raw state internals such as current_activation, plasticity, raw dimension scores"; the packets\' own rule "Do not include raw personality variables or numeric state scores"' },
  { id: 'prompt.missing_research_instruction', kinds: ['packet'], meaning: 'For `responder_scoped_repository_search`, `packet_prompt_text` must contain every `lore_access.research_instructions` entry verbatim, line by line for a multi-line entry (one error per missing entry).', source: 'seed 001: "includes visible research instructions in the prompt"' },
  { id: 'prompt.contradicts_repo_access', kinds: ['packet'], meaning: 'A `responder_scoped_repository_search` packet (`no_repo_access: false`) whose `packet_prompt_text` tells the responder it has no repository access: a clause (of a line, split at `,` `;` `:` `!` `?` and a sentence-ending `.`) where a negation (`no`, `not`, `never`, `without`, `cannot`, `unable`, `lack`, `…n\'t`) governs an access word (`access`, `search`, `read`, `browse`, `open`, `consult`, `query`, `look up`, `look <one or two words> up`, `lookup`) at most two words on, the negation is addressed to the responder (subject `you` / `the responder`, or a directive or verbless clause), and what the access reaches is the lore repository itself (`lore files`/`notes`/`docs`/`folder`/`vault`/`archive`, `lore access`, `lore search`, or a bare `repository`, `repo`, `codebase`, `vault`, `archive`, `files`, `lore` not qualified by an in-world noun, not `… of …`; a bare `vault` not after `open`, bare `files` not before `on`/`in`/`about`…), or nothing at all after a bare plural lookup noun (`no lookups`, `no searches`); never inside quotation marks; ignoring case. `Mara cannot open the vault`, `no one can open the vault until dawn`, `Do not invent lore.`, `Do not look away from Mara.`, `no repository of grievances` and quoted speech are not denials. `You cannot access the repository`, `No repository access.`, `Do not search the lore archive.`, `You may not look anything up in the lore.` and `Answer only from this packet; no lookups.` are caught; `You cannot access Mara\'s private intent` is not. One error per line.', source: 'seed 001: "responder_scoped_repository_search ... sets no_repo_access to false"; a prompt that denies the access the packet grants contradicts it' },
  { id: 'prompt.hidden_ref', kinds: ['packet'], meaning: '`packet_prompt_text` contains an entry of `hidden_context_audit.omitted_context_refs`, compared like `prompt.raw_state_marker`. One error per ref.', source: 'seed 001: "hidden_context_audit: refs and inference classes deliberately omitted"; seed 000 `no_hidden_state_refs: true`' },
  { id: 'excerpt.duplicate_ref_id', kinds: ['packet'], meaning: 'Two `visible_context.source_excerpts` entries share a `ref_id` (exact comparison); pointer = the later one\'s ref_id, the message names the first.', source: `${SEED000}, \`$defs/source_excerpt\`: excerpts are addressed by \`ref_id\` (the prompt and the responder cite them by it); buildPacket refuses the same (\`duplicate_ref_id\`)` },
  { id: 'capture.raw_output_not_json', kinds: ['capture'], meaning: '`raw_output` is not JSON (message gives line and column of the syntax error inside raw_output).', source: 'seed 001, Output Captures: "The raw output must parse to the reviewed parsed_output exactly."' },
  { id: 'capture.raw_output_mismatch', kinds: ['capture'], meaning: '`raw_output` parses to a value that is not deep-equal to `parsed_output` (pointer = first difference under /parsed_output; key order is ignored).', source: 'seed 001, Output Captures: "The raw output must parse to the reviewed parsed_output exactly."' },
  { id: 'capture.agent_mismatch', kinds: ['capture'], meaning: '`parsed_output.responder_agent_id` differs from the capture\'s `responder_agent_id`.', source: 'Ghostlight validate_responder_outputs.py: "parsed_output.responder_agent_id mismatch"' },
  { id: 'capture.hidden_ref_consulted', kinds: ['capture'], meaning: 'A `lore_access.consulted_refs` / `followed_refs` entry, a `lore_access.research_trace[].source_ref` or a `parsed_output.research_trace[].source_ref` (the responder\'s own trace, any origin) names an `isolation.hidden_context_refs` entry: the same note (its fragment ignored), a note under a hidden folder (`Ns:folder/`), or — for a hidden `Note.md#Heading` — that exact ref. One error per ref.', source: 'seed 001: "hidden_context_audit: refs and inference classes deliberately omitted" — research that consulted them is not the packet\'s; seed 000 `no_hidden_state_refs: true`' },
  { id: 'capture.leakage_accepted', kinds: ['capture'], meaning: '`review_status` is `accepted` or `accepted_as_draft` while a `leakage_audit` flag (`private_state_leak`, `author_only_leak`, `future_branch_leak`, `raw_state_soup`, `prompt_parroting`, `body_or_object_omniscience`) is true. One error per flag set, pointer /review_status.', source: 'seed 001, Output Captures: the leakage audit is part of the review — a capture whose own audit found a leak is not accepted; `loretrace capture` writes such a capture as `draft` (docs/RECEIPTS.md "Capture assembly", step 8)' },
  { id: 'capture.leakage_unlabelled', kinds: ['capture'], meaning: '`coordinator_review.failure_labels` is empty while a `leakage_audit` flag is true (pointer /coordinator_review/failure_labels; one error, naming every flag set).', source: 'seed 001, Output Captures: failure labels record why a sample is not accepted; `loretrace capture` writes every set leakage flag as a failure label (docs/RECEIPTS.md "Capture assembly", step 8)' },
  { id: 'capture.training_unaccepted', kinds: ['capture'], meaning: '`coordinator_review.accepted_for_training` is true while the capture is not accepted: `review_status` is not `accepted` or `accepted_as_draft`, or `coordinator_review.failure_labels` is not empty, or a `leakage_audit` flag is true. One error naming every reason, pointer /coordinator_review/accepted_for_training.', source: 'seed 001, Training Use: only accepted gold captures train; `loretrace capture` always writes `accepted_for_training: false` (docs/RECEIPTS.md "Capture assembly", step 8), and a sample labelled with a failure or left draft is not accepted' },
  { id: 'trace.duplicate_id', kinds: ['capture', 'capture-fragment'], meaning: 'A `trace_id` occurs twice in one research_trace array (`lore_access.research_trace` or `parsed_output.research_trace` of a capture, `research_trace` of a fragment); pointer = the later one.', source: 'Ghostlight validate_responder_outputs.py: "trace_id is duplicated"' },
  { id: 'trace.line_range', kinds: ['capture', 'capture-fragment'], meaning: 'A research_trace entry has `line_end < line_start` (lines are 1-based inclusive).', source: 'Ghostlight validate_responder_outputs.py: "line_end must be >= line_start"; seed 001: each entry records "line range"' },
  { id: 'trace.accepted_requires_trace', kinds: ['capture'], meaning: 'An accepted retrieval_augmented capture (`coordinator_review.accepted_for_training: true` or `review_status: accepted`) needs a non-empty `lore_access.research_trace`.', source: 'seed 001, Training Use: "the output capture must list consulted refs and trace entries"' },
  { id: 'trace.accepted_requires_runner_captured', kinds: ['capture'], meaning: 'An accepted retrieval_augmented capture needs `lore_access.research_trace_status: runner_captured`.', source: 'seed 001: "runner_captured ... This is required for accepted gold research-enabled captures."' },
  { id: 'research.missing_consulted_refs', kinds: ['capture', 'capture-fragment'], meaning: 'A `responder_scoped_repository_search` capture needs a non-empty `lore_access.consulted_refs` (a fragment: a non-empty `consulted_refs`, since it becomes the capture\'s).', source: 'seed 001: "No consulted refs means the research-enabled response failed at the first hurdle"' },
  { id: 'research.missing_summary', kinds: ['capture'], meaning: 'A `responder_scoped_repository_search` capture needs a non-blank `lore_access.research_summary`.', source: 'seed 001: "The output capture must preserve consulted seed refs, followed refs, a research trace, and a brief research summary."' },
  { id: 'capture.origin_mismatch', kinds: ['capture'], meaning: 'A capture says `lore_access.research_trace_status: runner_captured` but a `lore_access.research_trace` entry has another `origin` (pointer = that entry\'s origin; one error per entry).', source: 'seed 001: "runner_captured: the runner recorded the trace"; a runner_captured status claims every entry was recorded by the runner, and verify-trace fails such an entry as unbacked' },
  { id: 'fragment.origin_mismatch', kinds: ['capture-fragment'], meaning: 'A capture fragment says `research_trace_status: runner_captured` but a `research_trace` entry has another `origin` (pointer = that entry\'s origin).', source: 'seed 001: "runner_captured: the runner recorded the trace"; a fragment is the runner\'s own receipt' },
  { id: 'ref.not_found', kinds: ['packet', 'capture', 'projected-context'], meaning: 'With `root`: a repository-relative ref (`coordinator_artifact_ref`, `projected_context_ref`, `packet_ref`, `isolation.visible_input_ref`, `input.fixture_ref`, `input.annotation_ref`) names no file under root.', source: 'Ghostlight validate_responder_*.py / validate_projected_contexts.py: "... does not exist"' },
  { id: 'ref.outside_root', kinds: ['packet', 'capture', 'projected-context'], meaning: 'With `root`: such a ref is absolute or climbs out of root with `..`.', source: 'loretrace (refs are repository-relative by contract)' },
];

/** The raw-state markers a packet prompt must not contain (seed 001; Ghostlight's RAW_STATE_MARKERS). Matched case-insensitively. */
export const RAW_STATE_MARKERS: readonly string[] = ['current_activation', 'plasticity', 'canonical_state', 'raw state variable', 'raw numeric state', 'dimension score'];

/**
 * Raw numeric state (seed 001: no "raw dimension scores" in a packet prompt), in the two ways a state score
 * is written next to the name of what it measures: a word of at least three letters, optionally one or two
 * qualifiers (`dimension`, `score`, `level`, `value`, `weight`, `activation`: `dimension score`), then
 * - {@link RAW_STATE_FRACTION}: a number from 0 to 1 with a decimal point (`0.82`, `.7`, `1.0`), right after
 *   the word or after `:`, `=`, `(`, `,`, a dash (`—`, `–`, a spaced `-`), `is`, `was`, `at`, `is at` or
 *   `of` (`fear 0.82`, `fear=0.82`, `Fear 0.8`, `fear is 0.82`, `trust at 0.77`, `fear (0.82)`, `fear —
 *   0.82`, `fear, 0.82`);
 * - {@link RAW_STATE_SCALED}: a percentage (0 to 100, `%`, `percent` or `per cent`) or a mark out of 10 or 100
 *   (`7/10`, `82/100`), after `:` or `=` or a qualifier (`trust: 77%`, `fear=82%`, `loyalty: 7/10`,
 *   `trust level 77%`). A bare `word 85%` is not state: lore writes `achieved 85% efficiency` and
 *   `toward 10% of lightspeed` (AetheriaLore's Fusion and Soliton Drive notes), so the scaled forms need the
 *   label punctuation or qualifier a state readout has;
 * - {@link RAW_STATE_READOUT}: `is at 82%` and a bare mark out of its scale (`fear 82/100`, `stress 3/5`).
 * Prose numbers stay clear: times (`14:30`), counts (`3 of 5 workers`, `a crew of 40`), dates (`3/5/2893`,
 * `since 3/5`), `Deck 4`.
 * Any space character separates (a no-break space too). Not a version (`v0.1`, `0.1.2`, a word `version` or
 * `v` before it) and not a number that continues (`0.82.1`, `0.82x`).
 */
const RAW_STATE_FRACTION = /(?<![\p{L}\p{N}_])(\p{L}{3,})(?:[\p{Zs}\t]+(?:dimension|score|level|value|weight|activation)){0,2}(?:[\p{Zs}\t]*[:=(,—–][\p{Zs}\t]*|[\p{Zs}\t]+-[\p{Zs}\t]+|[\p{Zs}\t]+(?:(?:is|was|sits|stands)[\p{Zs}\t]+at|is|was|at|of)[\p{Zs}\t]+|[\p{Zs}\t]*)(?<![\p{N}.])(?:0?\.\d+|1\.0+)(?![\p{N}.]*[\p{L}\p{N}])(?!\.\d)/giu;
/** The scaled forms of {@link RAW_STATE_FRACTION}'s rule: a percentage or a mark out of 10 / 100 after a label. */
const RAW_STATE_SCALED = /(?<![\p{L}\p{N}_])(\p{L}{3,})(?:(?:[\p{Zs}\t]+(?:dimension|score|level|value|weight|activation)){1,2}[\p{Zs}\t]*[:=]?|[\p{Zs}\t]*[:=])[\p{Zs}\t]*(?<![\p{N}.])(?:(?:100|\d{1,2})(?:\.\d+)?[\p{Zs}\t]?(?:%|percent\b|per cent\b)|\d{1,3}(?:\.\d+)?[\p{Zs}\t]*\/[\p{Zs}\t]*(?:100|10)(?![\p{N}\/]|\.\d))/giu;
/**
 * The readouts of {@link RAW_STATE_FRACTION}'s rule that prose does not write: a percentage after `is at` /
 * `was at` / `sits at` / `stands at` (`fear is at 82%`; a bare `at 30%` is lore: "operated at 30%
 * efficiency"), and a mark `n/d` (d from 2 to 10, or 100; n ≤ d, checked in {@link rawNumericStateIn}) right
 * after the word or after `is`/`was`/`at` (`fear 82/100`, `stress 3/5`, `fear is 3/5`). Group 2 and 3 of the
 * mark are n and d.
 */
const RAW_STATE_READOUT = /(?<![\p{L}\p{N}_])(\p{L}{3,})(?:[\p{Zs}\t]+(?:dimension|score|level|value|weight|activation)){0,2}(?:[\p{Zs}\t]+(?:is|was|sits|stands)[\p{Zs}\t]+at[\p{Zs}\t]+(?<![\p{N}.])(?:100|\d{1,2})(?:\.\d+)?[\p{Zs}\t]?(?:%|percent\b|per cent\b)|(?:[\p{Zs}\t]+(?:is|was|at)[\p{Zs}\t]+|[\p{Zs}\t]+)(?<![\p{N}.\/])(\d{1,3})[\p{Zs}\t]*\/[\p{Zs}\t]*(100|10|[2-9])(?![\p{N}\/]|\.\d))/giu;
/**
 * Words before a number that make it a date, a span or a version, or a pronoun's prose, not state
 * (`since 3/5`, `until 4/9`, `version 0.5`, `the ratio 0.5`, `she is at 40% capacity`).
 */
const NOT_STATE_WORDS = new Set(['version', 'release', 'schema', 'ratio', 'since', 'until', 'till', 'before', 'after', 'from', 'dated', 'through', 'during', 'between', 'and', 'the', 'per', 'out', 'she', 'her', 'his', 'its', 'they', 'them', 'who', 'which', 'that', 'this', 'one']);

/**
 * Every raw numeric state occurrence in `text` ({@link RAW_STATE_FRACTION}, {@link RAW_STATE_SCALED},
 * {@link RAW_STATE_READOUT}), one per label position, as `{ at, text }` (0-based
 * UTF-16 offset, the matched characters), in order.
 */
export function rawNumericStateIn(text: string): { at: number; text: string }[] {
  const found: { at: number; text: string }[] = [];
  const seen = new Set<number>();
  for (const re of [RAW_STATE_FRACTION, RAW_STATE_SCALED, RAW_STATE_READOUT]) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      if (NOT_STATE_WORDS.has((m[1] as string).toLowerCase())) continue;
      // A mark is state only when it is one: at most its scale (`24/7` is a schedule, `12/5` a date).
      if (m[2] !== undefined && Number(m[2]) > Number(m[3])) continue;
      // Two forms can read the same label (`loyalty: 7/10`): one report per occurrence.
      if (seen.has(m.index)) continue;
      seen.add(m.index);
      found.push({ at: m.index, text: m[0] });
    }
  }
  return found.sort((a, b) => a.at - b.at);
}

/**
 * A word that negates what follows it in a clause: `no` (not `no one`, a pronoun: `no one can open the
 * vault` says nothing about the responder), `not` (`do not`, `may not`, `are not allowed to`), `never`,
 * `without`, `cannot`, `unable`, `lack(s)` and any `…n't` contraction (straight or curly apostrophe).
 */
const NEGATION = String.raw`(?:no(?![\s-]+one\b)|not|never|without|cannot|unable|lacks?|\p{L}+n['’]t)`;

/**
 * A verb or noun of reaching stored text: access, search, read, browse, open, consult, query, look
 * up/through/into, a lookup — and `look <one or two words> up` (`look anything up`, `look it up`).
 */
const ACCESS = String.raw`(?:access(?:es|ed|ing)?|search(?:es|ed|ing)?|read(?:s|ing)?|brows(?:e|es|ed|ing)|open(?:s|ed|ing)?|consult(?:s|ed|ing)?|quer(?:y|ies|ied|ying)|look(?:s|ed|ing)?\s+(?:up|through|into)|look(?:s|ed|ing)?(?:\s+[\p{L}'’-]+){1,2}?\s+up|look-?ups?)`;

/**
 * The negation governing the access word: the negation, at most two words, then the access word (`cannot
 * access`, `do not have access`, `no repository access`, `have no direct access`). Two words is the reach
 * of a verb group; a longer gap (`never reveal what you read`) negates another verb. Group 1 is the access word.
 */
const NEGATED_ACCESS = new RegExp(String.raw`\b${NEGATION}(?:\s+[\p{L}'’-]+){0,2}?\s+(${ACCESS})\b`, 'iu');

/**
 * The negation is addressed to the responder when the text of its clause before it is the responder as
 * subject — `you` or `the responder` and at most two words (`you cannot`, `You have no`, `you are unable`,
 * `the responder may not`) — or nothing but a list marker and `and`/`but`/`or`/`please`/`do` (a directive
 * or a verbless line: `No repository access.`, `Do not search the repo`, `Never read the lore files`), or
 * `and`/`or`/`nor` after such a subject ({@link ADDRESSED_COORDINATED}). A
 * character's or another person's limit (`Mara cannot open the vault`, `the clerk says no one can …`) is
 * not addressed to the responder.
 */
const ADDRESSED_SUBJECT = /\b(?:you|the responder)(?:\s+[\p{L}'’-]+){0,2}?\s+$/iu;
const ADDRESSED_DIRECTIVE = /^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:(?:and|but|or|please|do)\s+)*$/iu;
/** A negation coordinated with an earlier one of the responder's: `You have no conversation context and no repository access`. */
const ADDRESSED_COORDINATED = /\b(?:you|the responder)\b.*\s(?:and|or|nor)\s+$/iu;

/**
 * The lore repository as the thing reached: `lore files`/`notes`/`docs`/`documents`/`folder`/`vault`/
 * `archive`/`repository`, `lore access`/`lore search` (lore qualifying the access itself), or `repository`,
 * `repo`, `codebase`, `vault`, `archive`, `files` or `lore` standing alone — right after a determiner,
 * `lore`/`Obsidian`/`git`/`project`, the access verb or a preposition ({@link REPOSITORY_LEADS}), or at the
 * clause's start — and not qualified after it (`… of berth records`, `…'s`). So `the repository`, `the lore
 * vault`, `the lore archive` (seed 001's packet_only wording: "It does not search the lore archive"), `in
 * the lore`, `repo access` are the repository; `the seed vault`, `the gene vault`, `the records repository`,
 * `the vault of old manifests`, `the lore of the Navigators` are things in the world. A bare `vault` is also
 * not the repository after `open` (a vault one opens is a door, not a folder one searches), bare `files`
 * not when a place or subject follows (`the files on her desk`), bare `lore` not in `read lore into …`.
 */
const LORE_THING = /\blore (?:files?|notes?|docs?|documents?|folders?|vaults?|archives?|repositor(?:y|ies)|access|search)\b/iu;
const REPOSITORY_NOUN = /\b(repositor(?:y|ies)|repos?|vaults?|archives?|codebase|lore|files)\b/giu;
/**
 * A bare plural lookup noun as a whole verbless denial, with nothing it reaches: `no lookups`, `no
 * searches`, `no external lookups`, `without look-ups` — the lookup itself is what is denied.
 */
const BARE_LOOKUP_DENIAL = /^(?:no|without)\s+(?:(?:more|further|other|outside|external)\s+)?(?:look-?ups|searches|queries)\s*[.!]?\s*$/iu;
const REPOSITORY_LEADS: ReadonlySet<string> = new Set([
  'the', 'this', 'that', 'your', 'our', 'its', 'a', 'an', 'any', 'no', 'lore', 'obsidian', 'git', 'project',
  'to', 'in', 'into', 'through', 'from', 'up', 'or', 'and', 'with', 'without', 'have', 'has', 'direct', 'own',
]);

/** True when `text` (a clause from the negation on; `access` the negated access word) reaches the lore repository. */
function reachesRepository(text: string, access: string): boolean {
  if (LORE_THING.test(text)) return true;
  REPOSITORY_NOUN.lastIndex = 0;
  for (let m = REPOSITORY_NOUN.exec(text); m !== null; m = REPOSITORY_NOUN.exec(text)) {
    const before = /([\p{L}'’-]+)\s*$/u.exec(text.slice(0, m.index))?.[1]?.toLowerCase();
    const after = text.slice(m.index + m[0].length);
    if (/^(?:['’]s\b|\s+of\b)/iu.test(after)) continue;
    // `the files on her desk`, `the files about the wreck`: files somewhere in the world, not the repository.
    if (/^files$/iu.test(m[1] as string) && /^\s+(?:on|in|at|for|about|from|under|inside)\b/iu.test(after)) continue;
    // `read lore into her silence`: an idiom of reading meaning into something, not a lookup.
    if (/^lore$/iu.test(m[1] as string) && /^\s+into\b/iu.test(after)) continue;
    if (before !== undefined && !REPOSITORY_LEADS.has(before) && !new RegExp(String.raw`^${ACCESS}$`, 'iu').test(before)) continue;
    if (/^vaults?$/iu.test(m[1] as string) && /^open/iu.test(access)) continue;
    return true;
  }
  return false;
}

/**
 * The line with every quotation — `"…"` or `“…”`, marks included; an unclosed one runs to the line's end —
 * replaced by U+0001 characters of the same length, so offsets stay valid and no rule matches inside or
 * across quoted speech.
 */
function maskQuotations(line: string): string {
  return line.replace(/"[^"]*(?:"|$)|“[^”]*(?:”|$)/gu, (q) => '\u0001'.repeat(q.length));
}

/**
 * Clause boundaries inside a prompt line: `,`, `;`, `:`, `!`, `?`, and `.` followed by white space or the
 * line's end (so `repo.md` and `v0.turn-01` stay whole).
 */
const CLAUSE_BREAK = /[,;:!?]|\.(?=\s|$)/gu;

/**
 * The clauses of one prompt line that deny the responder repository access, as 0-based UTF-16 offsets
 * `{ start, end }` (end exclusive) into `line`, in order (a clause starts after a quotation that precedes
 * its negation). The rule, not a list of exact sentences: outside
 * quotation marks ({@link maskQuotations}: an NPC's quoted speech is never read), a clause denies
 * repository access when a negation governs an access word ({@link NEGATED_ACCESS}), the negation is
 * addressed to the responder ({@link ADDRESSED_SUBJECT}, {@link ADDRESSED_DIRECTIVE}) and what the access
 * reaches after it is the lore repository itself ({@link reachesRepository}). So `You have no repository
 * access`, `No repository access.`, `You cannot access the repository`, `You do not have access to the
 * repo` and `you can't search the vault` are denials; `You cannot access Mara's private intent` (no
 * repository), `Never reveal what you read in the vault` (the negation governs `reveal`), `Mara cannot open
 * the vault without the charter officer's key` (not the responder), `no one can open the vault until dawn`,
 * `Idris says: "You can't search the repository …"` (quoted speech), `You cannot open the vault` (a door)
 * and `the repository of berth records` (an in-world record) are not (hostile trial s8 §2). `Do not
 * search the lore archive.`, `You may not look anything up in the lore.` (`look … up` with one or two words
 * between) and a bare verbless `no lookups` / `no searches` ({@link BARE_LOOKUP_DENIAL}) are denials too;
 * `Do not invent lore.` (no access word), `Do not look away from Mara.` and `no repository of grievances`
 * are not. A denial
 * phrased with the repository first (`Repository access is not available`) is not caught; Ghostlight's
 * packet_only prompts deny it negation first (`You have no conversation context, no repository access, …`).
 * The one rule behind the validator's `prompt.contradicts_repo_access` and the builder's
 * `prompt_lines_rewritten`, so a line one flags the other rewrites. Source: seed 001,
 * "responder_scoped_repository_search ... sets no_repo_access to false".
 */
export function repositoryAccessDenials(line: string): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  const masked = maskQuotations(line);
  let start = 0;
  const ends = [...masked.matchAll(CLAUSE_BREAK)].map((m) => m.index as number);
  for (const end of [...ends, line.length]) {
    const clause = masked.slice(start, end);
    const negated = NEGATED_ACCESS.exec(clause);
    if (negated) {
      // A quotation before the negation is not part of the denial: the clause starts after it.
      const from = clause.lastIndexOf('\u0001', negated.index) + 1;
      const before = clause.slice(from, negated.index);
      const addressed = ADDRESSED_SUBJECT.test(before) || ADDRESSED_DIRECTIVE.test(before) || ADDRESSED_COORDINATED.test(before);
      const reach = clause.slice(negated.index).split('\u0001')[0] as string;
      if (addressed && (reachesRepository(reach, negated[1] as string) || BARE_LOOKUP_DENIAL.test(reach))) out.push({ start: start + from, end });
    }
    start = end + 1;
  }
  return out;
}

/**
 * The form in which hidden text is looked for: NFKC (fullwidth and other compatibility letters fold to
 * ASCII), format characters removed (`\p{Cf}`: zero-width spaces and joiners, bidi controls, soft
 * hyphens), every run of white space (no-break spaces and line breaks included) one space, lower case.
 * So `Brinefall\u00a0Truth`, `Brinefall\nTruth`, `Brinefall\u200b Truth` and `ＢＲＩＮＥＦＡＬＬ ＴＲＵＴＨ` all
 * contain the omitted ref `Brinefall Truth`. The one comparison behind the validator's `prompt.hidden_ref` /
 * `prompt.raw_state_marker` and buildPacket's `hidden_ref_in_output` (retrieve), so a spelling one refuses
 * the other refuses too. Lengths are in UTF-16 code units and differ from the input's.
 */
export function hiddenTextForm(text: string): string {
  return text.normalize('NFKC').replace(/\p{Cf}/gu, '').replace(/\s+/gu, ' ').toLowerCase();
}

/**
 * The first hidden thing `text` contains, as a phrase for a message, or null: an entry of
 * `hidden_context_audit.omitted_context_refs` (with its pointer; entries that are blank in
 * {@link hiddenTextForm} are ignored) or a raw-state marker (seed 001), compared in {@link hiddenTextForm}.
 */
export function hiddenTextIn(text: string, omittedRefs: readonly string[]): string | null {
  const t = hiddenTextForm(text);
  for (let i = 0; i < omittedRefs.length; i++) {
    const ref = omittedRefs[i];
    if (typeof ref !== 'string') continue;
    const r = hiddenTextForm(ref).trim();
    if (r !== '' && t.includes(r)) return `the omitted ref ${JSON.stringify(ref)} (/hidden_context_audit/omitted_context_refs/${i})`;
  }
  for (const marker of RAW_STATE_MARKERS) {
    if (t.includes(hiddenTextForm(marker))) return `the raw-state marker ${JSON.stringify(marker)}`;
  }
  return null;
}

/**
 * The hidden ref that lore ref `ref` names, or null. `hiddenRefs` are `hidden_context_audit.omitted_context_refs`
 * (a capture's `isolation.hidden_context_refs`): a note ref (`Ns:folder/Note.md`) is hit by any ref of that
 * note whatever its fragment (`#chunk1`, `#L5-8`, `#Heading`); a folder ref ending in `/` by any ref below it
 * (whole segments); a ref with a fragment (a hidden section) only by that exact ref. Both sides are
 * NFC-normalised first (refs are NFC, src/refs). Seed 001: the omitted refs are "deliberately omitted", so
 * research that consulted one is not research inside the packet.
 */
export function hiddenRefNamedBy(ref: string, hiddenRefs: readonly string[]): string | null {
  const r = ref.normalize('NFC');
  const note = r.split('#')[0]!;
  for (const h of hiddenRefs) {
    if (typeof h !== 'string' || h === '') continue;
    const hn = h.normalize('NFC');
    if (hn.includes('#') ? r === hn : hn.endsWith('/') ? note.startsWith(hn) : note === hn) return h;
  }
  return null;
}

/**
 * Where `text` contains `needle` when both are compared in {@link hiddenTextForm}: `text` is read once in
 * that form with, for each of its characters, the 0-based UTF-16 offset in `text` it came from, so
 * `find(needle)` gives the offset in the ORIGINAL text of the first match (−1 when there is none).
 * Matching is on the whole-string form (the verdict is exactly {@link hiddenTextIn}'s); the offset map
 * is built segment by segment (a base character with its combining marks), and in the rare text where
 * that differs from the whole-string form (Greek final sigma, a Hangul syllable split across segments)
 * the offset is found by bisection instead. Linear apart from that fallback (O(n log n) per match).
 */
export function hiddenTextSearch(text: string): { form: string; find: (needle: string) => number } {
  const form = hiddenTextForm(text);
  let mapped: { chars: string; from: number[] } | null | undefined;
  const map = (): { chars: string; from: number[] } | null => {
    if (mapped !== undefined) return mapped;
    let chars = '';
    const from: number[] = [];
    const emit = (seg: string, at: number) => {
      for (const ch of seg.normalize('NFKC').replace(/\p{Cf}/gu, '')) {
        if (/\s/u.test(ch)) {
          if (chars.endsWith(' ')) continue;
          chars += ' ';
          from.push(at);
          continue;
        }
        const low = ch.toLowerCase();
        chars += low;
        for (let k = 0; k < low.length; k++) from.push(at);
      }
    };
    let segStart = 0;
    let i = 0;
    while (i < text.length) {
      const cp = text.codePointAt(i) as number;
      const width = cp > 0xffff ? 2 : 1;
      const joins = i > 0 && (/\p{M}/u.test(String.fromCodePoint(cp)) || (cp >= 0x1160 && cp <= 0x11ff) || (cp >= 0xd7b0 && cp <= 0xd7ff));
      if (!joins && i > segStart) {
        emit(text.slice(segStart, i), segStart);
        segStart = i;
      }
      i += width;
    }
    if (i > segStart) emit(text.slice(segStart, i), segStart);
    mapped = chars === form ? { chars, from } : null;
    return mapped;
  };
  const bisect = (needle: string): number => {
    // Smallest end whose prefix contains the needle, then the largest start whose slice still does.
    let lo = 0;
    let hi = text.length;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (hiddenTextForm(text.slice(0, mid)).includes(needle)) hi = mid;
      else lo = mid;
    }
    const end = hi;
    lo = 0;
    hi = end;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (hiddenTextForm(text.slice(mid, end)).includes(needle)) lo = mid;
      else hi = mid;
    }
    return lo;
  };
  return {
    form,
    find: (needle) => {
      if (needle === '') return -1;
      const k = form.indexOf(needle);
      if (k < 0) return -1;
      const m = map();
      return m ? (m.from[k] as number) : bisect(needle);
    },
  };
}

/** Heading a responder_scoped_repository_search prompt must contain. */
export const RESEARCH_SECTION_HEADING = '## Required Lore Research';

const SCOPED_MODES = new Set(['coordinator_scoped_retrieval', 'responder_scoped_repository_search']);
const MODES = new Set(['curated_excerpts_only', ...SCOPED_MODES]);
const TRACE_STATUSES = new Set(['none', 'responder_reported', 'coordinator_reconstructed', 'runner_captured']);

type Obj = Record<string, unknown>;
const isStr = (v: unknown): v is string => typeof v === 'string';
const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

/** Escape one RFC 6901 reference token (`~` → `~0`, `/` → `~1`). */
export function escapePointerToken(token: string | number): string {
  return String(token).replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Build an RFC 6901 JSON pointer from tokens: `pointerOf('a/b', 0)` → `/a~1b/0`; no tokens → `""`. */
export function pointerOf(...tokens: (string | number)[]): string {
  return tokens.map((t) => '/' + escapePointerToken(t)).join('');
}

/**
 * Short JSON preview of a value for messages (at most `max` characters). Only the first `max + 1`
 * characters of the JSON text are ever built, so a 50 MB string or a 100 000-deep array previews in
 * constant work and without exhausting the stack (JSON.stringify would recurse to the bottom).
 */
export function preview(value: unknown, max = 60): string {
  const s = value === undefined ? 'undefined' : jsonPrefix(value, max + 1);
  return s.length > max ? s.slice(0, max - 1) + '…' : s;
}

/**
 * The JSON.stringify text of a JSON value, stopped once it is at least `limit` characters long (the
 * part built is a prefix of JSON.stringify's output). Recursion depth ≤ `limit`: every level adds a
 * bracket before descending.
 */
function jsonPrefix(value: unknown, limit: number): string {
  let out = '';
  const skip = (x: unknown) => x === undefined || typeof x === 'function' || typeof x === 'symbol';
  const walk = (x: unknown): void => {
    if (out.length >= limit) return;
    if (typeof x === 'string') {
      out += JSON.stringify(x.length > limit ? x.slice(0, limit) : x);
    } else if (typeof x === 'number') {
      out += Number.isFinite(x) ? String(x) : 'null';
    } else if (x === null || typeof x !== 'object') {
      out += typeof x === 'boolean' ? String(x) : 'null';
    } else if (Array.isArray(x)) {
      out += '[';
      for (let i = 0; i < x.length; i++) {
        if (out.length >= limit) return;
        if (i > 0) out += ',';
        walk(skip(x[i]) ? null : x[i]);
      }
      out += ']';
    } else {
      out += '{';
      let first = true;
      for (const k of Object.keys(x)) {
        const v = (x as Record<string, unknown>)[k];
        if (skip(v)) continue;
        if (out.length >= limit) return;
        out += (first ? '' : ',') + JSON.stringify(k) + ':';
        first = false;
        walk(v);
      }
      out += '}';
    }
  };
  walk(value);
  return out;
}

function issue(rule: string, pointer: string, message: string, expected?: string): ValidationIssue {
  return expected === undefined ? { rule, pointer, message } : { rule, pointer, message, expected };
}

/** Lane rules shared by packets and captures (generation_lane ⇒ lore_access.mode). */
function laneRules(doc: Obj): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  const la = doc.lore_access;
  if (!isJsonObject(la) || !isStr(la.mode) || !MODES.has(la.mode)) return out;
  if (doc.generation_lane === 'packet_only' && la.mode !== 'curated_excerpts_only') {
    out.push(issue('lane.packet_only_requires_curated_excerpts', '/lore_access/mode', `generation_lane is packet_only but lore_access.mode is ${la.mode}`, 'curated_excerpts_only'));
  }
  if (doc.generation_lane === 'retrieval_augmented' && !SCOPED_MODES.has(la.mode)) {
    out.push(issue('lane.retrieval_augmented_requires_scoped_mode', '/lore_access/mode', `generation_lane is retrieval_augmented but lore_access.mode is ${la.mode}`, 'coordinator_scoped_retrieval or responder_scoped_repository_search'));
  }
  return out;
}

/**
 * `ref.*` rules: each named field (a repository-relative path, optionally with `#fragment`) must name an existing
 * file or folder under `root`. Touches the file system (existsSync).
 */
function refRules(doc: Obj, root: string, fields: (string | number)[][]): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  const base = resolve(root);
  for (const path of fields) {
    let v: unknown = doc;
    for (const t of path) v = isJsonObject(v) ? v[t] : undefined;
    if (!isStr(v) || v === '') continue;
    const pointer = pointerOf(...path);
    const rel = v.split('#')[0] ?? '';
    const abs = resolve(base, rel);
    const up = relative(base, abs);
    if (isAbsolute(rel) || up.startsWith('..') || isAbsolute(up)) {
      out.push(issue('ref.outside_root', pointer, `${pointer.slice(1).replace(/\//g, '.')} ${preview(v, 200)} points outside root ${base}`, `a path relative to ${base}, without leading / or ..`));
    } else if (!existsSync(abs)) {
      out.push(issue('ref.not_found', pointer, `${pointer.slice(1).replace(/\//g, '.')} ${preview(v, 200)} does not exist under root ${base}`, `an existing file ${abs}`));
    }
  }
  return out;
}

/** Cross-field rules of a responder packet (see {@link VALIDATION_RULES}). `root` enables the `ref.*` rules. */
export function packetRules(doc: unknown, root?: string): ValidationIssue[] {
  if (!isJsonObject(doc)) return [];
  const out = laneRules(doc);
  const la = isJsonObject(doc.lore_access) ? doc.lore_access : undefined;
  const mode = la && isStr(la.mode) && MODES.has(la.mode) ? la.mode : undefined;
  const iso = isJsonObject(doc.isolation_requirements) ? doc.isolation_requirements : undefined;
  const prompt = isStr(doc.packet_prompt_text) ? doc.packet_prompt_text : undefined;
  const vc = isJsonObject(doc.visible_context) ? doc.visible_context : undefined;

  if (mode === 'responder_scoped_repository_search' && la) {
    if (Array.isArray(la.allowed_scope) && la.allowed_scope.length === 0) {
      out.push(issue('lane.responder_search_requires_allowed_scope', '/lore_access/allowed_scope', 'responder_scoped_repository_search declares an empty allowed_scope', 'at least one allowed_scope entry'));
    }
    if (la.research_instructions === undefined || (Array.isArray(la.research_instructions) && la.research_instructions.length === 0)) {
      out.push(issue('lane.responder_search_requires_research_instructions', '/lore_access/research_instructions', `responder_scoped_repository_search has ${la.research_instructions === undefined ? 'no' : 'empty'} lore_access.research_instructions`, 'a non-empty array of research instructions'));
    }
    if (la.traversal_policy === undefined) {
      out.push(issue('lane.responder_search_requires_traversal_policy', '/lore_access/traversal_policy', 'responder_scoped_repository_search has no lore_access.traversal_policy', 'a traversal_policy object (max_link_depth, allowed_prefixes, required_seed_refs, follow_link_classes, stop_conditions)'));
    }
    if (iso && typeof iso.no_repo_access === 'boolean' && iso.no_repo_access !== false) {
      out.push(issue('isolation.responder_search_requires_repo_access', '/isolation_requirements/no_repo_access', 'responder_scoped_repository_search keeps no_repo_access true, so the responder could not search', 'false'));
    }
    if (prompt !== undefined) {
      if (!prompt.includes(RESEARCH_SECTION_HEADING)) {
        out.push(issue('prompt.missing_research_section', '/packet_prompt_text', `packet_prompt_text has no "${RESEARCH_SECTION_HEADING}" section`, `a line "${RESEARCH_SECTION_HEADING}" followed by the research instructions`));
      }
      (Array.isArray(la.allowed_scope) ? la.allowed_scope : []).forEach((scope, i) => {
        if (isStr(scope) && scope !== '' && !prompt.includes(scope)) {
          out.push(issue('prompt.missing_allowed_scope', '/packet_prompt_text', `packet_prompt_text does not contain allowed_scope entry ${pointerOf('lore_access', 'allowed_scope', i)} ${preview(scope, 120)}`, 'every allowed_scope entry, verbatim'));
        }
      });
      (Array.isArray(la.research_instructions) ? la.research_instructions : []).forEach((instruction, i) => {
        // Line by line: a multi-line instruction is rendered with its continuation lines indented.
        if (isStr(instruction) && instruction.trim() !== '' && !instruction.split(/\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]/).every((l) => prompt.includes(l.trim()))) {
          out.push(issue('prompt.missing_research_instruction', '/packet_prompt_text', `packet_prompt_text does not contain research instruction ${pointerOf('lore_access', 'research_instructions', i)} ${preview(instruction, 120)}`, 'every research_instructions entry, verbatim'));
        }
      });
      if (iso && iso.no_repo_access === false) {
        prompt.split('\n').forEach((line, i) => {
          if (repositoryAccessDenials(line).length > 0) {
            out.push(issue('prompt.contradicts_repo_access', '/packet_prompt_text', `packet_prompt_text line ${i + 1} ${preview(line, 120)} denies the repository access that no_repo_access: false grants`, 'no line saying the responder has no repository access'));
          }
        });
      }
      const tp = isJsonObject(la.traversal_policy) ? la.traversal_policy : undefined;
      (tp && Array.isArray(tp.allowed_prefixes) ? tp.allowed_prefixes : []).forEach((prefix, i) => {
        if (isStr(prefix) && prefix !== '' && !prompt.includes(prefix)) {
          out.push(issue('prompt.missing_allowed_prefix', '/packet_prompt_text', `packet_prompt_text does not contain allowed prefix ${pointerOf('lore_access', 'traversal_policy', 'allowed_prefixes', i)} ${preview(prefix, 120)}`, 'every traversal_policy.allowed_prefixes entry, verbatim'));
        }
      });
    }
  } else if (mode !== undefined && iso && typeof iso.no_repo_access === 'boolean' && iso.no_repo_access !== true) {
    out.push(issue('isolation.requires_no_repo_access', '/isolation_requirements/no_repo_access', `lore_access.mode ${mode} sets no_repo_access false; only responder_scoped_repository_search may give the responder repo access`, 'true'));
  }

  if (prompt !== undefined) {
    if (vc && isStr(vc.local_context_prompt) && vc.local_context_prompt !== '' && !prompt.includes(vc.local_context_prompt)) {
      out.push(issue('prompt.missing_local_context', '/packet_prompt_text', 'packet_prompt_text does not contain visible_context.local_context_prompt verbatim', 'the whole local_context_prompt inside packet_prompt_text'));
    }
    const ev = vc && isJsonObject(vc.observed_event) ? vc.observed_event : undefined;
    if (ev && isStr(ev.observable_action) && ev.observable_action !== '' && !prompt.includes(ev.observable_action)) {
      out.push(issue('prompt.missing_observed_action', '/packet_prompt_text', 'packet_prompt_text does not contain visible_context.observed_event.observable_action verbatim', 'the observable_action inside packet_prompt_text'));
    }
    // Markers and omitted refs are looked for in hiddenTextForm (case, white space runs, format characters
    // and compatibility forms ignored): the comparison buildPacket (retrieve) refuses them in.
    const hidden = hiddenTextSearch(prompt);
    for (const marker of RAW_STATE_MARKERS) {
      const at = hidden.find(hiddenTextForm(marker));
      if (at >= 0) {
        out.push(issue('prompt.raw_state_marker', '/packet_prompt_text', `packet_prompt_text exposes raw-state marker "${marker}" at character ${at}`, `no raw-state markers (${RAW_STATE_MARKERS.join(', ')})`));
      }
    }
    for (const found of rawNumericStateIn(prompt)) {
      out.push(issue('prompt.raw_numeric_state', '/packet_prompt_text', `packet_prompt_text exposes raw numeric state ${preview(found.text, 80)} at character ${found.at}`, 'no numeric state scores (describe pressure in words)'));
    }
    const audit = isJsonObject(doc.hidden_context_audit) ? doc.hidden_context_audit : undefined;
    (audit && Array.isArray(audit.omitted_context_refs) ? audit.omitted_context_refs : []).forEach((ref, i) => {
      if (!isStr(ref)) return;
      const at = hidden.find(hiddenTextForm(ref).trim());
      if (at >= 0) {
        out.push(issue('prompt.hidden_ref', '/packet_prompt_text', `packet_prompt_text contains omitted ref ${pointerOf('hidden_context_audit', 'omitted_context_refs', i)} ${preview(ref, 120)} at character ${at}`, 'no hidden_context_audit.omitted_context_refs entry in the prompt'));
      }
    });
  }

  if (vc && Array.isArray(vc.source_excerpts)) {
    const firstOf = new Map<string, number>();
    vc.source_excerpts.forEach((ex, i) => {
      if (!isJsonObject(ex) || !isStr(ex.ref_id) || ex.ref_id === '') return;
      const first = firstOf.get(ex.ref_id);
      if (first === undefined) firstOf.set(ex.ref_id, i);
      else out.push(issue('excerpt.duplicate_ref_id', pointerOf('visible_context', 'source_excerpts', i, 'ref_id'), `ref_id ${preview(ex.ref_id, 120)} repeats ${pointerOf('visible_context', 'source_excerpts', first, 'ref_id')}`, 'ref_id values unique within visible_context.source_excerpts'));
    });
  }

  if (root !== undefined) out.push(...refRules(doc, root, [['coordinator_artifact_ref'], ['projected_context_ref']]));
  return out;
}

/**
 * First pointer (relative) at which two JSON values differ, or null when deep-equal (object key order
 * ignored; `-0` equals `0`, as in RFC 8785). Arrays are compared index by index, objects key by key in
 * code-unit order; a length difference is reported after the common prefix. Iterative (explicit stack),
 * so a 100 000-deep document cannot exhaust the call stack.
 */
export function firstDifference(a: unknown, b: unknown, at = ''): string | null {
  type Item = { a: unknown; b: unknown; at: string } | { diff: string };
  const stack: Item[] = [{ a, b, at }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if ('diff' in item) return item.diff;
    const { a: x, b: y, at: p } = item;
    if (Array.isArray(x) && Array.isArray(y)) {
      const n = Math.min(x.length, y.length);
      if (x.length !== y.length) stack.push({ diff: `${p}/${n}` });
      for (let i = n - 1; i >= 0; i--) stack.push({ a: x[i], b: y[i], at: `${p}/${i}` });
    } else if (isJsonObject(x) && isJsonObject(y)) {
      const keys = [...new Set([...Object.keys(x), ...Object.keys(y)])].sort((u, v) => (u < v ? -1 : u > v ? 1 : 0));
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i]!;
        const kp = `${p}/${escapePointerToken(k)}`;
        const hasX = Object.prototype.hasOwnProperty.call(x, k);
        const hasY = Object.prototype.hasOwnProperty.call(y, k);
        stack.push(hasX && hasY ? { a: x[k], b: y[k], at: kp } : { diff: kp });
      }
    } else if (x !== y) {
      return p;
    }
  }
  return null;
}

function valueAt(v: unknown, relPointer: string): unknown {
  if (relPointer === '') return v;
  for (const raw of relPointer.slice(1).split('/')) {
    const t = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(v)) v = v[Number(t)];
    else if (isJsonObject(v)) v = Object.prototype.hasOwnProperty.call(v, t) ? v[t] : undefined;
    else return undefined;
  }
  return v;
}

/** `trace.duplicate_id` and `trace.line_range` over one research_trace array at `base` (tokens). */
function traceArrayRules(trace: unknown, base: string[]): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  if (!Array.isArray(trace)) return out;
  const seen = new Map<string, number>();
  trace.forEach((entry, i) => {
    if (!isJsonObject(entry)) return;
    if (isStr(entry.trace_id) && entry.trace_id !== '') {
      const first = seen.get(entry.trace_id);
      if (first !== undefined) {
        out.push(issue('trace.duplicate_id', pointerOf(...base, i, 'trace_id'), `trace_id ${preview(entry.trace_id)} repeats ${pointerOf(...base, first, 'trace_id')}`, 'trace_id values unique within the research_trace array'));
      } else seen.set(entry.trace_id, i);
    }
    if (isInt(entry.line_start) && isInt(entry.line_end) && entry.line_end < entry.line_start) {
      out.push(issue('trace.line_range', pointerOf(...base, i, 'line_end'), `line_end ${entry.line_end} is before line_start ${entry.line_start}`, `line_end ≥ ${entry.line_start} (lines are 1-based, inclusive)`));
    }
  });
  return out;
}

/** Line and column (1-based) of a 0-based character offset in `text` (breaks: CRLF, CR, LF). */
export function lineColumnAt(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let col = 1;
  for (let i = 0; i < offset && i < text.length; i++) {
    const c = text[i];
    if (c === '\r') {
      if (text[i + 1] === '\n') i++;
      line++;
      col = 1;
    } else if (c === '\n') {
      line++;
      col = 1;
    } else col++;
  }
  return { line, column: col };
}

/**
 * Find where `text` stops being JSON (RFC 8259). Returns null for valid JSON, else the 0-based character offset
 * and a short reason. Used instead of JSON.parse's message because Node's wording and position reporting vary
 * between versions. Iterative (an explicit stack of open containers), so `[[[[…` 200 000 deep is reported,
 * not a stack overflow.
 */
export function jsonSyntaxError(text: string): { offset: number; reason: string } | null {
  let i = 0;
  const ws = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  class Stop extends Error {
    constructor(readonly offset: number, readonly reason: string) {
      super(reason);
    }
  }
  const fail = (reason: string): never => {
    throw new Stop(i, i >= text.length ? 'unexpected end of input' : `${reason}, found ${JSON.stringify(text[i])}`);
  };
  const str = () => {
    i++;
    while (i < text.length && text[i] !== '"') {
      const c = text.charCodeAt(i);
      if (c < 0x20) fail('control character in string');
      if (text[i] === '\\') {
        i++;
        if (text[i] === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail('bad \\u escape');
          i += 5;
        } else if (i < text.length && '"\\/bfnrt'.includes(text[i] as string)) i++;
        else fail('bad escape');
      } else i++;
    }
    if (i >= text.length) fail('unterminated string');
    i++;
  };
  const key = () => {
    ws();
    if (text[i] !== '"') fail('expected a property name in double quotes');
    str();
    ws();
    if (text[i] !== ':') fail("expected ':'");
    i++;
  };
  const NUMBER = /-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
  /** Open containers, innermost last: `{` or `[`. */
  const open: string[] = [];
  try {
    let wantValue = true;
    for (;;) {
      if (wantValue) {
        ws();
        const c = text[i];
        wantValue = false;
        if (c === '{') {
          i++;
          ws();
          if (text[i] === '}') i++;
          else {
            open.push('{');
            key();
            wantValue = true;
          }
        } else if (c === '[') {
          i++;
          ws();
          if (text[i] === ']') i++;
          else {
            open.push('[');
            wantValue = true;
          }
        } else if (c === '"') str();
        else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
          NUMBER.lastIndex = i;
          const m = NUMBER.exec(text);
          if (!m || m[0] === '-') fail('bad number');
          i += (m as RegExpExecArray)[0].length;
        } else {
          const lit = ['true', 'false', 'null'].find((l) => text.startsWith(l, i));
          if (lit === undefined) fail('expected a JSON value');
          i += (lit as string).length;
        }
        continue;
      }
      if (open.length === 0) break;
      ws();
      const top = open[open.length - 1];
      if (text[i] === ',') {
        i++;
        if (top === '{') key();
        wantValue = true;
      } else if (text[i] === (top === '{' ? '}' : ']')) {
        i++;
        open.pop();
      } else fail(top === '{' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
    ws();
    if (i < text.length) fail('unexpected text after the JSON value');
    return null;
  } catch (e) {
    if (e instanceof Stop) return { offset: e.offset, reason: e.reason };
    throw e;
  }
}

/** One event of {@link walkJson}: a container opening or closing, an object key, or a number token. */
type JsonWalkEvent =
  | { kind: 'open'; obj: boolean; depth: number; offset: number }
  | { kind: 'close' }
  | { kind: 'key'; key: string; raw: string; offset: number }
  | { kind: 'number'; token: string; offset: number };

/**
 * The one structural walk behind {@link jsonDuplicateKey}, {@link jsonTooDeep} and {@link jsonLossyValue}:
 * reads JSON text left to right, skipping strings (brackets and digits inside them do not count), and calls
 * `visit` for every container that opens (`depth` 1-based) or closes, every object key (decoded; `raw` as
 * written, quotes included) and every number token, with `pointer()` giving the RFC 6901 pointer of the
 * place — the container being opened, the key, the number. A string is a key when a `:` follows it. The
 * walk stops at the first non-null answer of `visit` and returns it, else null. Linear and iterative, so
 * safe on any depth; run it on text that parses (on other text the pointers may be approximate).
 */
function walkJson<R>(text: string, visit: (e: JsonWalkEvent, pointer: () => string) => R | null): R | null {
  type Frame = { obj: boolean; token: string; index: number };
  const frames: Frame[] = [];
  const pointer = (): string => frames.map((f) => '/' + escapePointerToken(f.token)).join('');
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    let out: R | null = null;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const top = frames[frames.length - 1];
      if (top?.obj) {
        let k = j + 1;
        while (k < text.length && (text[k] === ' ' || text[k] === '\n' || text[k] === '\r' || text[k] === '\t')) k++;
        if (text[k] === ':') {
          const raw = text.slice(i, j + 1);
          let key: string;
          try {
            key = JSON.parse(raw) as string;
          } catch {
            key = text.slice(i + 1, j);
          }
          top.token = key;
          out = visit({ kind: 'key', key, raw, offset: i }, pointer);
        }
      }
      i = j;
    } else if (c === '{' || c === '[') {
      out = visit({ kind: 'open', obj: c === '{', depth: frames.length + 1, offset: i }, pointer);
      frames.push({ obj: c === '{', token: c === '[' ? '0' : '', index: 0 });
    } else if (c === '}' || c === ']') {
      frames.pop();
      out = visit({ kind: 'close' }, pointer);
    } else if (c === ',') {
      const top = frames[frames.length - 1];
      if (top && !top.obj) top.token = String(++top.index);
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      let j = i + 1;
      while (j < text.length && /[0-9.eE+-]/.test(text[j]!)) j++;
      out = visit({ kind: 'number', token: text.slice(i, j), offset: i }, pointer);
      i = j - 1;
    }
    if (out !== null) return out;
  }
  return null;
}

/**
 * First duplicate object key in a document that is already known to be valid JSON (call after JSON.parse
 * succeeded). JSON.parse silently keeps the last of two equal keys, so `{"max_link_depth": 1,
 * "max_link_depth": 50}` would be read as 50 while a reviewer sees 1. Returns the RFC 6901 pointer of the
 * second occurrence, its 0-based character offset and the offset of the first occurrence, or null.
 * Linear, iterative.
 */
export function jsonDuplicateKey(text: string): { pointer: string; offset: number; first_offset: number } | null {
  // The keys seen so far in each open container (arrays get an empty map that is never used).
  const keys: Map<string, number>[] = [];
  return walkJson(text, (e, pointer) => {
    if (e.kind === 'open') keys.push(new Map());
    else if (e.kind === 'close') keys.pop();
    else if (e.kind === 'key') {
      const seen = keys[keys.length - 1]!;
      const first = seen.get(e.key);
      if (first !== undefined) return { pointer: pointer(), offset: e.offset, first_offset: first };
      seen.set(e.key, e.offset);
    }
    return null;
  });
}

/**
 * How deep loretrace reads JSON: 256 nested arrays and objects. Ghostlight's documents and loretrace's own
 * nest under 20; a deeper document is refused (`json_too_deep`) before any recursive step (canonical JSON,
 * schema validation, writing) could overflow the stack on it.
 */
export const MAX_JSON_DEPTH = 256;

/**
 * The first place where JSON text nests deeper than `max` arrays and objects, or null: the RFC 6901
 * pointer of the container that opens level `max + 1`, its 0-based character offset and that depth.
 * Strings are skipped (brackets inside them do not count). Linear, iterative — safe on any depth; run it
 * on text that parses (on other text the pointer may be approximate).
 */
export function jsonTooDeep(text: string, max: number = MAX_JSON_DEPTH): { pointer: string; offset: number; depth: number } | null {
  return walkJson(text, (e, pointer) => (e.kind === 'open' && e.depth > max ? { pointer: pointer(), offset: e.offset, depth: e.depth } : null));
}

/**
 * The first value of JSON text that a JavaScript reader would not keep as written, or null:
 * - `proto_key`: a key named `__proto__` (however escaped). `JSON.parse` keeps it as an own property, but
 *   every later copy by assignment (`Object.assign`, `obj[key] = value`) drops it or sets the prototype;
 * - `unsafe_integer`: an integer beyond ±(2^53 − 1) (`Number.MAX_SAFE_INTEGER`), which `JSON.parse` rounds
 *   to the nearest double (`9007199254740993` reads as `9007199254740992`).
 * - `non_finite_number` (only with `options.nonFinite`): a number beyond the largest double (`1e400`), which
 *   `JSON.parse` reads as `Infinity` and `JSON.stringify` then writes as `null`.
 * Returns the kind, the RFC 6901 pointer (of the key, or of the number), its 0-based offset and the token as
 * written. Strings are skipped; linear, iterative. Run it on text that parses.
 */
export function jsonLossyValue(text: string, options: { nonFinite?: boolean; exact?: boolean } = {}): { kind: 'proto_key' | 'unsafe_integer' | 'non_finite_number' | 'lossy_number'; pointer: string; offset: number; token: string } | null {
  return walkJson(text, (e, pointer) => {
    if (e.kind === 'key' && e.key === '__proto__') return { kind: 'proto_key' as const, pointer: pointer(), offset: e.offset, token: e.raw };
    if (options.nonFinite === true && e.kind === 'number' && !Number.isFinite(Number(e.token))) return { kind: 'non_finite_number' as const, pointer: pointer(), offset: e.offset, token: e.token };
    if (options.exact === true && e.kind === 'number' && /[.eE]/.test(e.token)) {
      const value = Number(e.token);
      // A non-zero literal read as 0 (2e-400), anywhere; in an integer field, any fraction or exponent that
      // reads as an integer (1.9999999999999999 → 2): the value enforced would not be the text a reviewer reads.
      const underflow = value === 0 && /[1-9]/.test(e.token.replace(/[eE].*$/, ''));
      if (underflow || (Number.isInteger(value) && isIntegerField(pointer()))) return { kind: 'lossy_number' as const, pointer: pointer(), offset: e.offset, token: e.token };
    }
    if (e.kind === 'number' && /^-?\d{16,}$/.test(e.token)) {
      const n = BigInt(e.token);
      const limit = BigInt(Number.MAX_SAFE_INTEGER);
      if (n > limit || n < -limit) return { kind: 'unsafe_integer' as const, pointer: pointer(), offset: e.offset, token: e.token };
    }
    return null;
  });
}

/**
 * Field names that hold integers in every document loretrace reads (schemas/*.json `type: integer` of the
 * input documents: packets, policies, captures, fragments, configs, proxy limits): a line number, a chunk
 * index, a depth, a count. Any `max_…` key (a budget or limit: `max_link_depth`, `max_refs`,
 * `max_chars_returned`, `max_file_bytes`) is one too.
 */
export const INTEGER_FIELDS: ReadonlySet<string> = new Set(['line_start', 'line_end', 'chunk_index', 'line', 'column', 'link_line', 'link_column', 'seq', 'piece', 'depth', 'records', 'bytes', 'chars_returned']);

/** True when the last token of an RFC 6901 pointer names an integer field ({@link INTEGER_FIELDS}, or `max_…`). */
export function isIntegerField(pointer: string): boolean {
  const last = (pointer.split('/').pop() ?? '').replace(/~1/g, '/').replace(/~0/g, '~');
  return INTEGER_FIELDS.has(last) || /^max_[a-z_]+$/.test(last);
}

/** A long JSON pointer shortened for a message: its first 6 tokens, `…`, and its last 2 (the whole pointer when short). */
export function shortPointer(pointer: string): string {
  const tokens = pointer.split('/').slice(1);
  return tokens.length <= 8 ? pointer : `/${tokens.slice(0, 6).join('/')}/…/${tokens.slice(-2).join('/')}`;
}

/** Cross-field rules of a responder output capture (see {@link VALIDATION_RULES}). `root` enables the `ref.*` rules. */
export function captureRules(doc: unknown, root?: string): ValidationIssue[] {
  if (!isJsonObject(doc)) return [];
  const out = laneRules(doc);
  const la = isJsonObject(doc.lore_access) ? doc.lore_access : undefined;
  const parsed = isJsonObject(doc.parsed_output) ? doc.parsed_output : undefined;

  if (isStr(doc.raw_output) && doc.raw_output !== '') {
    const bad = jsonSyntaxError(doc.raw_output);
    if (bad) {
      const { line, column } = lineColumnAt(doc.raw_output, bad.offset);
      out.push(issue('capture.raw_output_not_json', '/raw_output', `raw_output is not JSON: ${bad.reason} at line ${line}, column ${column} of raw_output`, 'the responder output as one JSON object equal to parsed_output'));
    } else if (doc.parsed_output !== undefined) {
      const raw: unknown = JSON.parse(doc.raw_output);
      const diff = firstDifference(raw, doc.parsed_output);
      if (diff !== null) {
        out.push(issue('capture.raw_output_mismatch', `/parsed_output${diff}`, `raw_output does not parse to exactly parsed_output: at ${diff === '' ? 'the top level' : diff} raw_output has ${preview(valueAt(raw, diff))}, parsed_output has ${preview(valueAt(doc.parsed_output, diff))}`, 'JSON.parse(raw_output) deep-equal to parsed_output'));
      }
    }
  }
  if (parsed && isStr(parsed.responder_agent_id) && isStr(doc.responder_agent_id) && parsed.responder_agent_id !== '' && doc.responder_agent_id !== '' && parsed.responder_agent_id !== doc.responder_agent_id) {
    out.push(issue('capture.agent_mismatch', '/parsed_output/responder_agent_id', `parsed_output.responder_agent_id ${preview(parsed.responder_agent_id)} differs from responder_agent_id ${preview(doc.responder_agent_id)}`, preview(doc.responder_agent_id)));
  }
  if (la) out.push(...traceArrayRules(la.research_trace, ['lore_access', 'research_trace']));
  if (la) out.push(...statusOriginRules(la, ['lore_access'], 'capture.origin_mismatch'));
  const isolation = isJsonObject(doc.isolation) ? doc.isolation : undefined;
  if (isolation && Array.isArray(isolation.hidden_context_refs)) out.push(...hiddenRefConsultedRules(la, parsed, isolation.hidden_context_refs.filter(isStr)));
  if (parsed) out.push(...traceArrayRules(parsed.research_trace, ['parsed_output', 'research_trace']));

  const review = isJsonObject(doc.coordinator_review) ? doc.coordinator_review : undefined;
  out.push(...leakageReviewRules(doc, review));
  out.push(...trainingAcceptedRules(doc, review));
  const accepted = doc.review_status === 'accepted' || review?.accepted_for_training === true;
  if (la && doc.generation_lane === 'retrieval_augmented' && accepted) {
    const why = doc.review_status === 'accepted' ? 'review_status accepted' : 'coordinator_review.accepted_for_training true';
    if (la.research_trace === undefined || (Array.isArray(la.research_trace) && la.research_trace.length === 0)) {
      out.push(issue('trace.accepted_requires_trace', '/lore_access/research_trace', `accepted retrieval_augmented capture (${why}) has ${la.research_trace === undefined ? 'no' : 'an empty'} lore_access.research_trace`, 'at least one research_trace entry'));
    }
    const st = la.research_trace_status;
    if (st === undefined || (isStr(st) && TRACE_STATUSES.has(st) && st !== 'runner_captured')) {
      out.push(issue('trace.accepted_requires_runner_captured', '/lore_access/research_trace_status', `accepted retrieval_augmented capture (${why}) has research_trace_status ${st === undefined ? '(absent)' : st}`, 'runner_captured'));
    }
  }
  if (la && la.mode === 'responder_scoped_repository_search') {
    if (Array.isArray(la.consulted_refs) && la.consulted_refs.length === 0) {
      out.push(issue('research.missing_consulted_refs', '/lore_access/consulted_refs', 'responder_scoped_repository_search capture lists no consulted_refs', 'the seed refs actually consulted (at least one)'));
    }
    if (la.research_summary === undefined || (isStr(la.research_summary) && la.research_summary.trim() === '')) {
      out.push(issue('research.missing_summary', '/lore_access/research_summary', `responder_scoped_repository_search capture has ${la.research_summary === undefined ? 'no' : 'a blank'} research_summary`, 'a brief research summary'));
    }
  }
  if (root !== undefined) out.push(...refRules(doc, root, [['packet_ref'], ['coordinator_artifact_ref'], ['isolation', 'visible_input_ref']]));
  return out;
}

/** The six boolean flags of Ghostlight's `leakage_audit`, in its schema's order. */
const LEAKAGE_AUDIT_FLAGS = ['private_state_leak', 'author_only_leak', 'future_branch_leak', 'raw_state_soup', 'prompt_parroting', 'body_or_object_omniscience'] as const;

/**
 * `capture.leakage_accepted` (one issue per flag set, pointer /review_status) and `capture.leakage_unlabelled`
 * (pointer /coordinator_review/failure_labels): a capture whose own `leakage_audit` sets a flag is neither
 * accepted nor without failure labels. Fires only on a `leakage_audit` object with boolean flags.
 */
function leakageReviewRules(doc: Record<string, unknown>, review: Record<string, unknown> | undefined): ValidationIssue[] {
  const audit = isJsonObject(doc.leakage_audit) ? doc.leakage_audit : undefined;
  if (!audit) return [];
  const set = LEAKAGE_AUDIT_FLAGS.filter((f) => audit[f] === true);
  if (set.length === 0) return [];
  const out: ValidationIssue[] = [];
  if (doc.review_status === 'accepted' || doc.review_status === 'accepted_as_draft') {
    for (const f of set) out.push(issue('capture.leakage_accepted', '/review_status', `review_status ${doc.review_status} while leakage_audit.${f} is true: a capture whose leakage audit found a leak is not accepted`, 'review_status draft (or rejected) while a leakage_audit flag is set'));
  }
  if (review && Array.isArray(review.failure_labels) && review.failure_labels.length === 0) {
    out.push(issue('capture.leakage_unlabelled', '/coordinator_review/failure_labels', `coordinator_review.failure_labels is empty while leakage_audit sets ${set.join(', ')}`, `a failure label for each leakage flag set (${set.join(', ')})`));
  }
  return out;
}

/**
 * `capture.training_unaccepted` (pointer /coordinator_review/accepted_for_training): `accepted_for_training:
 * true` on a capture that is not accepted — its `review_status` is neither `accepted` nor `accepted_as_draft`,
 * it carries a failure label, or its `leakage_audit` sets a flag. One issue naming every reason. Ghostlight's
 * accepted captures (`accepted_as_draft`, no label, no flag, `accepted_for_training: true`) pass.
 */
function trainingAcceptedRules(doc: Record<string, unknown>, review: Record<string, unknown> | undefined): ValidationIssue[] {
  if (review?.accepted_for_training !== true) return [];
  const why: string[] = [];
  if (doc.review_status !== 'accepted' && doc.review_status !== 'accepted_as_draft') why.push(`review_status ${isStr(doc.review_status) ? doc.review_status : preview(doc.review_status)}`);
  const labels = Array.isArray(review.failure_labels) ? review.failure_labels : [];
  if (labels.length > 0) why.push(`failure_labels ${labels.map((l) => (isStr(l) ? l : preview(l))).join(', ')}`);
  const audit = isJsonObject(doc.leakage_audit) ? doc.leakage_audit : {};
  const set = LEAKAGE_AUDIT_FLAGS.filter((f) => audit[f] === true);
  if (set.length > 0) why.push(`leakage_audit sets ${set.join(', ')}`);
  if (why.length === 0) return [];
  return [issue('capture.training_unaccepted', '/coordinator_review/accepted_for_training', `accepted_for_training is true on a capture that is not accepted (${why.join('; ')})`, 'accepted_for_training false unless review_status is accepted or accepted_as_draft with no failure label and no leakage flag')];
}

/**
 * `capture.hidden_ref_consulted`: every `consulted_refs` / `followed_refs` entry and `research_trace[].source_ref`
 * of a capture's `lore_access`, and every `research_trace[].source_ref` of its `parsed_output` (`po`, the
 * responder's own trace, whatever origin an entry states), that names one of `hiddenRefs`
 * ({@link hiddenRefNamedBy}), one issue each, pointer = that field. A responder's entry quoting the packet's
 * omitted author-only note cites lore the packet never gave, as a receipt that served it would.
 */
function hiddenRefConsultedRules(la: Record<string, unknown> | undefined, po: Record<string, unknown> | undefined, hiddenRefs: readonly string[]): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  const check = (ref: unknown, at: (string | number)[]) => {
    if (!isStr(ref)) return;
    const hit = hiddenRefNamedBy(ref, hiddenRefs);
    if (hit === null) return;
    const pointer = pointerOf(...at);
    const what = at[0] === 'parsed_output' ? 'the responder\'s trace cites lore the packet omits' : 'the research consulted lore the packet omits';
    out.push(issue('capture.hidden_ref_consulted', pointer, `${pointer.slice(1).replace(/\//g, '.')} ${preview(ref, 200)} names the hidden ref ${preview(hit, 200)} of isolation.hidden_context_refs: ${what}`, 'only refs outside isolation.hidden_context_refs'));
  };
  if (la) {
    for (const field of ['consulted_refs', 'followed_refs'] as const) {
      const list = la[field];
      if (Array.isArray(list)) list.forEach((ref, i) => check(ref, ['lore_access', field, i]));
    }
    if (Array.isArray(la.research_trace)) la.research_trace.forEach((t, i) => check(isJsonObject(t) ? t.source_ref : undefined, ['lore_access', 'research_trace', i, 'source_ref']));
  }
  if (po && Array.isArray(po.research_trace)) po.research_trace.forEach((t, i) => check(isJsonObject(t) ? t.source_ref : undefined, ['parsed_output', 'research_trace', i, 'source_ref']));
  return out;
}

/**
 * `research_trace_status: runner_captured` with an entry of another origin (`coordinator_reconstructed`,
 * `responder_reported`) in the `research_trace` beside it: one issue `rule` per such entry, pointer = its
 * `origin` under `at` (`/lore_access` of a capture, the top of a fragment). Seed 001: runner_captured means
 * "the runner recorded the trace" — every entry of it.
 */
function statusOriginRules(block: Record<string, unknown>, at: (string | number)[], rule: string): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  if (block.research_trace_status !== 'runner_captured' || !Array.isArray(block.research_trace)) return out;
  block.research_trace.forEach((entry, i) => {
    if (isJsonObject(entry) && (entry.origin === 'coordinator_reconstructed' || entry.origin === 'responder_reported')) {
      out.push(issue(rule, pointerOf(...at, 'research_trace', i, 'origin'), `research_trace_status is runner_captured but entry ${i} has origin ${entry.origin}`, 'origin runner_captured on every entry'));
    }
  });
  return out;
}

/**
 * Cross-field rules of a capture fragment (`retrieve --capture-out`, `ledger export`; schemas/capture-fragment.schema.json):
 * `trace.duplicate_id` and `trace.line_range` on `/research_trace`, `fragment.origin_mismatch`, and for
 * `responder_scoped_repository_search` `research.missing_consulted_refs`. Pointers are relative to the fragment.
 * Whether each entry matches the vault is `verify-trace`'s job, not the validator's.
 */
export function captureFragmentRules(doc: unknown): ValidationIssue[] {
  if (!isJsonObject(doc)) return [];
  const out = traceArrayRules(doc.research_trace, ['research_trace']);
  out.push(...statusOriginRules(doc, [], 'fragment.origin_mismatch'));
  if (doc.mode === 'responder_scoped_repository_search' && Array.isArray(doc.consulted_refs) && doc.consulted_refs.length === 0) {
    out.push(issue('research.missing_consulted_refs', '/consulted_refs', 'responder_scoped_repository_search fragment lists no consulted_refs', 'the seed refs actually consulted (at least one)'));
  }
  return out;
}

/** Cross-field rules of a projected local context: only the `ref.*` rules, with `root`. */
export function projectedContextRules(doc: unknown, root?: string): ValidationIssue[] {
  if (!isJsonObject(doc) || root === undefined) return [];
  return refRules(doc, root, [['input', 'fixture_ref'], ['input', 'annotation_ref']]);
}
