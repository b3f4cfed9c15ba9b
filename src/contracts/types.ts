/**
 * TypeScript shapes of the three Ghostlight contracts loretrace reads and writes, and of the validator's report.
 *
 * Field names are the contracts' snake_case JSON names. The JSON Schemas in `schemas/` are the authority
 * (they accept exactly what Ghostlight's schemas accept, seed 000 and `../shared/ghostlight/schemas/`);
 * these types describe a document that passed them. Cross-field rules (lane ⇒ mode, prompt contents, trace
 * receipts) are listed in docs/VALIDATE.md and enforced by src/contracts/rules.ts.
 */

/** Review state shared by packets and captures. */
export type ReviewStatus = 'draft' | 'accepted' | 'accepted_as_draft' | 'useful_needs_revision' | 'rejected' | 'superseded';
/** Which history a fixture belongs to. */
export type FixtureLane = 'historical_grounded' | 'transition_grounded' | 'future_branch';
/** Canon standing of the fixture. */
export type CanonStatus = 'single_history' | 'branch_local' | 'promoted_branch' | 'template' | 'draft';
/**
 * `packet_only`: runtime-parity lane, the responder never searches lore. `retrieval_augmented`: lore-absorption
 * lane, a declared lore scope was searched before the responder acts (seed 001, Generation Lanes).
 */
export type GenerationLane = 'packet_only' | 'retrieval_augmented';
/**
 * `curated_excerpts_only` (packet_only lane); `coordinator_scoped_retrieval` (a worker such as loretrace searched
 * and wrote `source_excerpts`; the responder has no repo access); `responder_scoped_repository_search` (the
 * responder itself searches the declared scope, here through loretrace's proxy).
 */
export type LoreAccessMode = 'curated_excerpts_only' | 'coordinator_scoped_retrieval' | 'responder_scoped_repository_search';
/** How the responder is run. */
export type IsolationMethod = 'subagent_no_fork' | 'manual_packet_only' | 'external_model_packet_only';

/**
 * `lore_access.traversal_policy` of a packet (seed 001, Packet Contents), exactly the Ghostlight shape.
 * - `max_link_depth`: link hops from a seed, integer ≥ 0.
 * - `allowed_prefixes`: lore ref prefixes (`AetheriaLore:Aetheria/Worldbuilding/Pre-Elysium/`) a walk may enter.
 * - `required_seed_refs`: refs that must be consulted first.
 * - `follow_link_classes`: plain-English link classes to follow ("referenced social movements ...").
 * - `stop_conditions`: plain-English stop rules.
 * Lists may be empty as far as the schema goes. Compiled by src/policy/compile.ts.
 */
export interface TraversalPolicy {
  max_link_depth: number;
  allowed_prefixes: string[];
  required_seed_refs: string[];
  follow_link_classes: string[];
  stop_conditions: string[];
}

/** `lore_access` of a responder packet. `required_provenance` is always `true`. */
export interface PacketLoreAccess {
  mode: LoreAccessMode;
  /** Declared lore scope (refs or prose such as `Packet-local excerpts only`). */
  allowed_scope: string[];
  /** Required (non-empty) for `responder_scoped_repository_search`. */
  research_instructions?: string[];
  /** Required for `responder_scoped_repository_search`; loretrace also sets it for coordinator_scoped_retrieval. */
  traversal_policy?: TraversalPolicy;
  required_provenance: true;
}

/** What the character can see or hear of the prior action. `spoken_text` may be empty. */
export interface ObservedEvent {
  event_id: string;
  actor_agent_id: string;
  observable_action: string;
  spoken_text: string;
  visible_object_refs: string[];
  /** At least one note. */
  visibility_notes: string[];
}

/** A short source-backed fact shown to the responder. For loretrace lore excerpts `source_ref` is a lore ref. */
export interface SourceExcerpt {
  ref_id: string;
  source_ref: string;
  text: string;
}

/** A responder packet (`ghostlight.responder_packet.v0`, seed 000). */
export interface ResponderPacket {
  schema_version: 'ghostlight.responder_packet.v0';
  packet_id: string;
  review_status: ReviewStatus;
  fixture_lane: FixtureLane;
  canon_status: CanonStatus;
  /** Repository-relative path (checked only with `root`). */
  coordinator_artifact_ref: string;
  /** Repository-relative path (checked only with `root`). */
  projected_context_ref: string;
  responder_agent_id: string;
  generation_lane: GenerationLane;
  lore_access: PacketLoreAccess;
  visible_context: {
    local_context_prompt: string;
    observed_event: ObservedEvent;
    /** At least one label. */
    allowed_action_labels: string[];
    source_excerpts: SourceExcerpt[];
  };
  output_contract: { response_schema: string; required_fields: string[]; response_rules: string[] };
  hidden_context_audit: {
    /** None of these may appear in `packet_prompt_text`. At least one. */
    omitted_context_refs: string[];
    forbidden_inference_classes: string[];
    known_absences: string[];
  };
  isolation_requirements: {
    isolation_method: IsolationMethod;
    packet_only: true;
    /** `false` only for responder_scoped_repository_search. */
    no_repo_access: boolean;
    no_conversation_context: true;
    no_hidden_state_refs: true;
  };
  /** The exact prompt text sent to the responder. */
  packet_prompt_text: string;
  review: { reviewer: string; review_notes: string[]; accepted_for_sandbox_use: boolean; failure_labels: string[] };
}

/** How a trace entry was obtained (seed 001): only `runner_captured` is proof of the research path. */
export type TraceOrigin = 'responder_reported' | 'coordinator_reconstructed' | 'runner_captured';
/** Status of a capture's whole research trace; `none` when there is none. */
export type ResearchTraceStatus = 'none' | TraceOrigin;

/**
 * One research receipt (`$defs/research_trace_entry` of schemas/responder-output.schema.json).
 * Lines are 1-based and inclusive in the original file; `line_end ≥ line_start`; `chunk_index` is 0-based.
 * For `runner_captured` entries `extracted_constraint` is the exact text of those lines joined with `"\n"`.
 */
export interface ResearchTraceEntry {
  /** Unique within its array. */
  trace_id: string;
  origin: TraceOrigin;
  query: string;
  source_ref: string;
  /** Vault-relative path. */
  source_path: string;
  chunk_index: number;
  line_start: number;
  line_end: number;
  extracted_constraint: string;
  used_for: string;
}

/** `lore_access` of a capture: what was consulted, with receipts. */
export interface CaptureLoreAccess {
  mode: LoreAccessMode;
  /** Non-empty for responder_scoped_repository_search. */
  consulted_refs: string[];
  followed_refs?: string[];
  /** Non-empty for responder_scoped_repository_search. */
  research_summary?: string;
  research_trace?: ResearchTraceEntry[];
  /** `runner_captured` for an accepted retrieval_augmented capture. */
  research_trace_status?: ResearchTraceStatus;
}

/** A state or relationship update candidate: a non-empty string or an object with a non-empty `value`. */
export type UpdateCandidate = string | { value: string; key?: string; target_agent_id?: string; [extra: string]: unknown };

/** The responder's JSON object as reviewed (`parsed_output`). */
export interface ParsedResponse {
  responder_agent_id: string;
  action_label: string;
  visible_action: string;
  spoken_text: string;
  private_interpretation: string;
  intended_effect: string;
  state_update_candidates: UpdateCandidate[];
  relationship_update_candidates: UpdateCandidate[];
  unresolved_hooks: string[];
  consulted_refs?: string[];
  followed_refs?: string[];
  research_summary?: string;
  research_trace?: ResearchTraceEntry[];
}

/**
 * Ghostlight's `leakage_audit` object (responder-output `$defs/leakage_audit`): one boolean per kind of
 * leak a reviewer confirms (seed 001, "Packet Contents"), and free-text notes. loretrace's automated first
 * pass (`auditLeakage`, src/receipts/leakage.ts) sets the booleans it can decide and leaves the rest false.
 */
export interface LeakageAudit {
  private_state_leak: boolean;
  author_only_leak: boolean;
  future_branch_leak: boolean;
  raw_state_soup: boolean;
  prompt_parroting: boolean;
  body_or_object_omniscience: boolean;
  notes: string[];
}

/** A responder output capture (`ghostlight.responder_output.v0`). */
export interface ResponderOutputCapture {
  schema_version: 'ghostlight.responder_output.v0';
  capture_id: string;
  review_status: ReviewStatus;
  fixture_lane: FixtureLane;
  canon_status: CanonStatus;
  packet_ref: string;
  coordinator_artifact_ref: string;
  responder_agent_id: string;
  generation_lane: GenerationLane;
  lore_access: CaptureLoreAccess;
  isolation: {
    isolation_method: IsolationMethod;
    fork_context: boolean;
    visible_input_ref: string;
    hidden_context_refs: string[];
    worker_model_family: string;
  };
  /** Must parse (JSON) to exactly `parsed_output`. */
  raw_output: string;
  parsed_output: ParsedResponse;
  leakage_audit: LeakageAudit;
  coordinator_review: {
    reviewer: string;
    accepted_for_training: boolean;
    review_notes: string[];
    coordinator_interventions: { intervention_type: string; description: string }[];
    failure_labels: string[];
  };
}

/** A text block of a projected context: non-empty text with at least one source ref. */
export interface TextBlock {
  text: string;
  source_refs: string[];
}

/** A runtime retrieval requirement of a projected context; the packet builder turns these into queries. */
export interface RetrievalRequirement {
  requirement_id: string;
  trigger: string;
  compact_fact: string;
  source_refs: string[];
  prompt_role: 'source_excerpt' | 'setting_constraint' | 'action_affordance' | 'do_not_invent';
}

/** A projected local context (`ghostlight.projected_local_context.v0`). Only the fields loretrace reads are typed closely. */
export interface ProjectedLocalContext {
  schema_version: 'ghostlight.projected_local_context.v0';
  projection_id: string;
  input: {
    fixture_ref: string;
    annotation_ref: string;
    scene_id: string;
    local_agent_id: string;
    listener_ids: string[];
    projection_mode: string;
  };
  context: {
    local_agent_id: string;
    identity: string;
    setting: string;
    known_facts: TextBlock[];
    current_stakes: TextBlock[];
    embodiment_and_interface: TextBlock[];
    active_inner_pressures: TextBlock[];
    relationship_read: TextBlock[];
    tensions: TextBlock[];
    runtime_retrieval_requirements: RetrievalRequirement[];
    latent_pressure_requirements: { pressure_id: string; text: string; source_refs: string[]; projection_rule: string; review_rule: string }[];
    retrieved_lore_prompt_blocks: TextBlock[];
    latent_pressure_prompt_blocks: TextBlock[];
    action_affordances: TextBlock[];
    projection_controls: Record<string, unknown>;
    voice_surface: TextBlock[];
    likely_response_moves: TextBlock[];
    do_not_invent: TextBlock[];
    observed_event?: Record<string, unknown>;
    prompt_text: string;
  };
  audit: {
    projector: string;
    raw_state_hidden_from_prompt: true;
    character_local_context_only: true;
    omitted_private_context: string[];
    review_status: 'draft' | 'accepted' | 'needs_revision' | 'rejected';
  };
}

/** The three Ghostlight contract kinds (seed 000 and Ghostlight's schemas/). */
export type ContractKind = 'packet' | 'capture' | 'projected-context';

/**
 * The document kinds `loretrace validate` knows: the three contract kinds plus loretrace's capture fragment
 * (`retrieve --capture-out`, `ledger export`; schemas/capture-fragment.schema.json).
 */
export type DocumentKind = ContractKind | 'capture-fragment';

/**
 * One problem found in a document.
 * - `rule`: stable id, `schema.<keyword>` (schema.required, schema.additional_property, schema.enum, schema.type, ...)
 *   or a cross-field rule id (lane.*, prompt.*, capture.*, trace.*, research.*, ref.*); all listed in docs/VALIDATE.md
 *   and in {@link VALIDATION_RULES}.
 * - `pointer`: RFC 6901 JSON pointer into the document (`~` → `~0`, `/` → `~1`); `""` is the whole document.
 * - `message`: one sentence naming the field and the problem.
 * - `expected`: what would have been accepted, in words.
 */
export interface ValidationIssue {
  rule: string;
  pointer: string;
  message: string;
  expected?: string;
}

/**
 * The result of validating one document.
 * - `file`: as given in the options (`<input>` when none).
 * - `valid`: true when `errors` is empty.
 * - `errors`: sorted by pointer (code-unit order), then rule, then message.
 * - `warnings`: in lenient mode, the unknown properties that were ignored (rule `lenient.ignored_property`),
 *   so nothing is dropped silently; always empty in strict mode.
 */
export interface ValidationReport {
  file: string;
  kind: DocumentKind;
  valid: boolean;
  errors: ValidationIssue[];
  warnings: ValidationIssue[];
}

/**
 * Options of the validators.
 * - `file`: name to put in the report and messages (default `<input>`).
 * - `lenient`: ignore unknown properties (like Ghostlight's hand-written validators) — they are reported as
 *   warnings; every other schema constraint and every cross-field rule still applies. Default false.
 * - `root`: directory that repository-relative refs (`coordinator_artifact_ref`, `projected_context_ref`,
 *   `packet_ref`, `isolation.visible_input_ref`, `input.fixture_ref`, `input.annotation_ref`) are resolved
 *   against; ref-existence rules run only when it is given.
 */
export interface ValidateOptions {
  file?: string;
  lenient?: boolean;
  root?: string;
}
