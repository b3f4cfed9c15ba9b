/**
 * One `retrieve` run from files to files — what `loretrace retrieve` does for one draft and what
 * `retrieveBatch` (src/packet/batch.ts) does for each draft of a corpus, so that both write the same bytes
 * (docs/RETRIEVE.md). The run reads like the command:
 *
 * 1. {@link checkRetrieveTargets} — refuse output paths that would lose data (same file twice, an input,
 *    a symlink, a folder) and outputs that exist (unless `force`) or that a lock lists (always; seed 002:
 *    "Historical strict-handoff packets must remain immutable");
 * 2. {@link readRetrieveInputs} — the draft, projected context and policy files, their exact bytes kept for
 *    the lock;
 * 3. {@link planRetrieveOutputs} — `buildPacket`, then for the coordinator lane `recordRetrieval` (the
 *    run's own hash-chained ledger, seed 004) and the capture fragment bound to it, and the lock beside the
 *    packet (src/receipts/lock.ts);
 * 4. `writeAllAtomic` (src/receipts/outputs.ts) — every file or none.
 *
 * Nothing is written until every step has succeeded. Paths in requests are as the user gave them,
 * resolved against `cwd`; the strings given are the ones recorded in messages (the ledger's `packet_file` is
 * the packet's path relative to the ledger's folder).
 */
import { createHash } from 'node:crypto';
import { lstat, stat } from 'node:fs/promises';
import { dirname, relative, resolve, sep } from 'node:path';
import { LoretraceError, isLoretraceError } from '../errors.js';
import type { TraversalPolicy } from '../contracts/types.js';
import { decodeJsonDocument, readInputBytes } from '../contracts/json-input.js';
import type { VaultIndex } from '../types.js';
import { recordRetrieval } from '../receipts/retrieve-ledger.js';
import { lockPathFor } from '../receipts/lock.js';
import type { LockInputFile } from '../receipts/lock.js';
import { documentText, guardOutputs, lockTarget, refuseFolderNames, refuseLockLikeNames, writeAllAtomic, type OutputTarget } from '../receipts/outputs.js';
import { assertNoSymlinkOnPath, checkOutputPath } from '../safe-write.js';
import { buildPacket } from './build.js';
import type { LedgerSigner } from '../receipts/signing.js';
import type { BuildPacketResult, RetrievalLane } from './build.js';

/** The files of one retrieve run, as the user named them (relative to {@link RetrieveRunEnv.cwd}). */
export interface RetrieveRequest {
  /** The draft responder packet (`--packet`). */
  packet: string;
  /** The projected local context (`--projected-context`), if any. */
  projectedContext?: string;
  /** The traversal policy file (`--policy`), used when the draft's lore_access has none. */
  policy?: string;
  /** Lane to build (`--lane`); default as `buildPacket`. */
  lane?: RetrievalLane;
  /** Refuse a policy with any clause short of `enforced`, partially enforced or advisory (`--strict-policy`). */
  strictPolicy?: boolean;
  /** Where the packet goes (`--out`); its lock is `<out without .json>.lock.json` beside it. */
  out: string;
  /** Where the capture fragment goes (`--capture-out`; coordinator lane). */
  captureOut?: string;
  /** Where the ledger goes (`--ledger`; coordinator lane); default {@link defaultLedgerPath} of `out`. */
  ledger?: string;
  /** Replace existing outputs that no lock lists (`--force`). */
  force?: boolean;
  /**
   * Build even when a policy given from outside the draft is off its scene (`policy_seed_off_scene`;
   * `--allow-off-scene-policy`); by default that run fails with `policy_off_scene` (exit 1), nothing written.
   */
  allowOffScenePolicy?: boolean;
  /**
   * A packet built for the responder lane has no capture fragment and no ledger: `'refuse'` (default, the
   * single command: a `captureOut` or `ledger` given for it is a usage error) or `'omit'` (a batch: those
   * two outputs are simply not written for it).
   */
  responderLane?: 'refuse' | 'omit';
  /**
   * How messages name each file (default: the single command's options, `--out`, `--packet`, …). A batch,
   * whose user gave `--batch` and `--out-dir`, never `--out`, passes {@link BATCH_FILE_LABELS}.
   */
  labels?: RetrieveFileLabels;
}

/** The words messages use for each file of a {@link RetrieveRequest} (an option name, or a description). */
export interface RetrieveFileLabels {
  out: string;
  captureOut: string;
  ledger: string;
  packet: string;
  projectedContext: string;
  policy: string;
}

/** The single command's labels: each file by the option that named it. */
export const OPTION_FILE_LABELS: RetrieveFileLabels = {
  out: '--out', captureOut: '--capture-out', ledger: '--ledger', packet: '--packet', projectedContext: '--projected-context', policy: '--policy',
};

/**
 * A batch's labels: its outputs are derived under `--out-dir` and its inputs found by naming rules
 * (docs/RETRIEVE.md "batch"), so a message names what the file is, not an option the user never typed.
 */
export const BATCH_FILE_LABELS: RetrieveFileLabels = {
  out: 'the output packet (under --out-dir)', captureOut: 'the output capture fragment (under --out-dir)', ledger: 'the output ledger (under --out-dir)',
  packet: 'the draft', projectedContext: 'the projected context', policy: 'the policy',
};

/** Where a run reads and what it records. */
export interface RetrieveRunEnv {
  /** Directory relative paths are resolved against. */
  cwd: string;
  /** Largest JSON input, in bytes (default 8 MiB, `DEFAULT_MAX_INPUT_BYTES`). */
  maxInputBytes?: number;
  /** Clock of the ledger's `occurred_on` (default the wall clock; the CLI fixes it from `SOURCE_DATE_EPOCH`). */
  now?: () => Date;
  /**
   * Runner key that signs the coordinator lane's ledger (`--signing-key`, src/receipts/signing.ts); none:
   * unsigned. A batch signs every draft's ledger with it.
   */
  signer?: LedgerSigner | null;
}

/** A JSON input of the run: its parsed value and the lock entry over its exact bytes. */
export interface RetrieveInput {
  value: unknown;
  lock: LockInputFile;
}

/** What {@link readRetrieveInputs} read. */
export interface RetrieveInputs {
  draft: RetrieveInput;
  projectedContext: RetrieveInput | null;
  policy: RetrieveInput | null;
  /** The policy file's traversal_policy and `allowed_scope` ({@link policyFromFile}), or null without `policy`. */
  policyFile: { policy: TraversalPolicy; allowedScope?: string[] } | null;
}

/** What {@link planRetrieveOutputs} built: the packet build, the ledger (coordinator lane) and the files to write. */
export interface RetrievePlan {
  result: BuildPacketResult;
  /** The recorded ledger and bound capture fragment (coordinator lane), or null. */
  recorded: ReturnType<typeof recordRetrieval> | null;
  /** Packet, ledger, capture fragment (when asked) and lock, in that order. */
  targets: OutputTarget[];
}

/** Default ledger path of a coordinator run: beside `--out`, `.json` replaced by `.ledger.jsonl`. */
export function defaultLedgerPath(out: string): string {
  return out.replace(/\.json$/i, '') + '.ledger.jsonl';
}

/** The responder packet's `schema_version` (Ghostlight's responder-packet schema). */
const PACKET_SCHEMA_VERSION = 'ghostlight.responder_packet.v0';

/** Other Ghostlight documents a user may pass to `--packet` by mistake, and what to do instead. */
const OTHER_DOCUMENTS: Readonly<Record<string, string>> = {
  'ghostlight.responder_output.v0': 'a responder output capture; pass the draft packet it was made from',
  'ghostlight.projected_local_context.v0': 'a projected local context; pass it with --projected-context and the draft with --packet',
};

/**
 * Refuse a `--packet` document that is another kind of document (its `schema_version` is a string other
 * than the responder packet's) in one line naming that schema_version, before the packet contract would
 * list every field the two kinds do not share. A draft without `schema_version` is left to `buildPacket`.
 * @throws LoretraceError `invalid_draft` (exit 1), pointer `/schema_version`.
 */
function assertDraftKind(draft: unknown, file: string): void {
  if (typeof draft !== 'object' || draft === null || Array.isArray(draft)) return;
  const version = (draft as Record<string, unknown>)['schema_version'];
  if (typeof version !== 'string' || version === PACKET_SCHEMA_VERSION) return;
  const what = OTHER_DOCUMENTS[version] ?? 'not a responder packet';
  throw new LoretraceError('invalid_draft', `${file} has schema_version ${JSON.stringify(version)}, ${what}; --packet takes a draft responder packet (schema_version "${PACKET_SCHEMA_VERSION}")`, {
    file, pointer: '/schema_version', expected: PACKET_SCHEMA_VERSION,
  });
}

/**
 * A policy file is either a bare traversal_policy (`{ max_link_depth, allowed_prefixes, ... }`) or an
 * object with `traversal_policy` (and optionally `allowed_scope`) — the `lore_access` shape of a packet.
 * @throws LoretraceError `bad_policy` (exit 1) naming the file and pointer.
 */
export function policyFromFile(value: unknown, file: string): { policy: TraversalPolicy; allowedScope?: string[] } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new LoretraceError('bad_policy', `${file}: a policy file must be a JSON object (a traversal_policy, or { traversal_policy, allowed_scope? })`, { file, pointer: '', expected: 'a JSON object' });
  }
  const obj = value as Record<string, unknown>;
  if ('traversal_policy' in obj) {
    const scope = obj['allowed_scope'];
    if (scope !== undefined && !(Array.isArray(scope) && scope.every((s) => typeof s === 'string' && s.length > 0))) {
      throw new LoretraceError('bad_policy', `${file}: /allowed_scope must be a list of non-empty strings`, { file, pointer: '/allowed_scope', expected: 'a list of refs' });
    }
    return { policy: obj['traversal_policy'] as TraversalPolicy, ...(scope !== undefined ? { allowedScope: scope as string[] } : {}) };
  }
  const { $schema: _schema, ...rest } = obj;
  return { policy: rest as unknown as TraversalPolicy };
}

/** The identity of an existing file (device + inode), or null when it does not exist. */
async function fileId(abs: string): Promise<string | null> {
  try {
    const st = await stat(abs);
    return `${st.dev}:${st.ino}`;
  } catch {
    return null;
  }
}

/** The `[option, file]` pairs of a request's outputs (packet, capture fragment, ledger) and inputs. */
function requestFiles(request: RetrieveRequest): { outputs: [string, string][]; inputs: [string, string][] } {
  const label = request.labels ?? OPTION_FILE_LABELS;
  return {
    outputs: [
      [label.out, request.out],
      ...(request.captureOut !== undefined ? [[label.captureOut, request.captureOut] as [string, string]] : []),
      [label.ledger, request.ledger ?? defaultLedgerPath(request.out)],
    ],
    inputs: [
      [label.packet, request.packet],
      ...(request.projectedContext !== undefined ? [[label.projectedContext, request.projectedContext] as [string, string]] : []),
      ...(request.policy !== undefined ? [[label.policy, request.policy] as [string, string]] : []),
    ],
  };
}

/**
 * Refuse one output path that would lose data or cannot be written (`usage`, exit 2): named twice; a
 * symlink or under a symlinked folder (`output_symlink`); existing and not a regular file; the file of an
 * input (also through a hard link) or of another output; a parent that exists and is not a directory.
 */
async function checkOneTarget(option: string, file: string, abs: string, inputIds: Map<string, string>, seen: Map<string, string>): Promise<void> {
  const same = seen.get(abs);
  if (same !== undefined) {
    throw new LoretraceError('usage', `${option} ${file} is the same file as ${same}; expected two different files (nothing written)`, { file, expected: 'distinct output files' }, 2);
  }
  seen.set(abs, option);
  assertNoSymlinkOnPath(abs);
  let st: Awaited<ReturnType<typeof lstat>> | null = null;
  try {
    st = await lstat(abs);
  } catch {
    st = null;
  }
  if (st !== null) {
    if (!st.isFile()) {
      throw new LoretraceError('usage', `${option} ${file} is ${st.isDirectory() ? 'a directory' : 'not a regular file'}; expected the path of a JSON file to write (nothing written)`, { file, expected: 'a regular file path' }, 2);
    }
    const input = inputIds.get(`${st.dev}:${st.ino}`);
    if (input !== undefined) {
      throw new LoretraceError('usage', `${option} ${file} is the file given with ${input}; expected a different output file, so that the input stays as it was (nothing written)`, { file, expected: 'an output path that is not an input' }, 2);
    }
    const other = [...seen.entries()].find(([p, o]) => o !== option && p !== abs);
    if (other !== undefined && (await fileId(other[0])) === `${st.dev}:${st.ino}`) {
      throw new LoretraceError('usage', `${option} ${file} is the same file as ${other[1]}; expected two different files (nothing written)`, { file, expected: 'distinct output files' }, 2);
    }
  }
  for (let dir = dirname(abs); ; dir = dirname(dir)) {
    let ds: Awaited<ReturnType<typeof stat>> | null = null;
    try {
      ds = await stat(dir);
    } catch {
      ds = null;
    }
    if (ds !== null) {
      if (!ds.isDirectory()) {
        throw new LoretraceError('usage', `${option} ${file}: ${dir} is not a directory; expected a writable folder for the output (nothing written)`, { file, expected: 'a folder path' }, 2);
      }
      break;
    }
    if (dirname(dir) === dir) break;
  }
  // The folders can be made and take the file: found now, before the build, not when writing (/proc).
  checkOutputPath(abs, `${option} ${file}`);
}

/**
 * Step 1: refuse the run's output paths before anything is read or built — each path as
 * {@link checkOneTarget}, then `guardOutputs` over the packet, capture fragment and lock (`output_exists`
 * unless `force`, `output_locked` always; exit 2).
 * @throws LoretraceError `usage` (also an output path ending in a separator, {@link refuseFolderNames}),
 *   `output_named_like_lock` (an output, the ledger included, ending in `.lock.json`), `output_symlink`,
 *   `output_exists`, `output_locked` (all exit 2).
 */
export async function checkRetrieveTargets(request: RetrieveRequest, env: RetrieveRunEnv): Promise<void> {
  const { outputs, inputs } = requestFiles(request);
  const inputIds = new Map<string, string>();
  for (const [option, file] of inputs) {
    const id = await fileId(resolve(env.cwd, file));
    if (id !== null) inputIds.set(id, option);
  }
  const seen = new Map<string, string>();
  refuseFolderNames(outputs.map(([option, file]) => ({ given: file, option })));
  for (const [option, file] of outputs) await checkOneTarget(option, file, resolve(env.cwd, file), inputIds, seen);
  const outAbs = resolve(env.cwd, request.out);
  // Every output, the ledger included (guardOutputs does not cover it: LedgerWriter refuses an existing one).
  refuseLockLikeNames([...outputs.map(([option, file]) => ({ abs: resolve(env.cwd, file), option })), { abs: lockPathFor(outAbs), option: 'the lock file' }]);
  const label = request.labels ?? OPTION_FILE_LABELS;
  await guardOutputs([
    { abs: outAbs, option: label.out },
    ...(request.captureOut !== undefined ? [{ abs: resolve(env.cwd, request.captureOut), option: label.captureOut }] : []),
    { abs: lockPathFor(outAbs), option: 'the lock file' },
  ], request.force === true);
}

/**
 * Read one JSON input: its exact bytes (hashed into the lock; at most `maxInputBytes`, checked before
 * reading), then strict UTF-8 and JSON (src/contracts/json-input.ts).
 * @throws LoretraceError `file_not_found` (`expected` names the document), `input_too_large`, `not_utf8`,
 *   `bad_json`, `duplicate_key` — all exit 2.
 */
async function readJsonInput(env: RetrieveRunEnv, file: string, what: string): Promise<RetrieveInput> {
  const abs = resolve(env.cwd, file);
  const cap = env.maxInputBytes !== undefined ? { maxBytes: env.maxInputBytes } : {};
  const bytes = await readInputBytes(abs, file, cap).catch((e: unknown) => {
    if (isLoretraceError(e) && e.code === 'file_not_found') throw new LoretraceError(e.code, e.message, { file, expected: `a readable JSON ${what} file` }, 2);
    throw e;
  });
  return { value: decodeJsonDocument(bytes, file, cap), lock: { abs, role: 'input', content: bytes } };
}

/**
 * Step 2: read the draft, the projected context and the policy file of a request; a draft that is another
 * Ghostlight document is refused by its `schema_version`.
 * @throws LoretraceError as {@link readJsonInput}; `invalid_draft` (exit 1); `bad_policy` (exit 1).
 */
export async function readRetrieveInputs(request: RetrieveRequest, env: RetrieveRunEnv): Promise<RetrieveInputs> {
  const draft = await readJsonInput(env, request.packet, 'draft responder packet');
  const projectedContext = request.projectedContext !== undefined ? await readJsonInput(env, request.projectedContext, 'projected local context') : null;
  const policy = request.policy !== undefined ? await readJsonInput(env, request.policy, 'traversal policy') : null;
  assertDraftKind(draft.value, request.packet);
  const policyFile = policy !== null && request.policy !== undefined ? policyFromFile(policy.value, request.policy) : null;
  return { draft, projectedContext, policy, policyFile };
}

/**
 * Refuse a capture fragment or ledger path given for a packet built for the responder lane (its proxy
 * writes the ledger), unless the request says to omit them.
 * @throws LoretraceError `usage` (exit 2).
 */
function checkLaneOutputs(request: RetrieveRequest, result: BuildPacketResult): void {
  if (result.capture !== null || request.responderLane === 'omit') return;
  if (request.captureOut !== undefined) {
    throw new LoretraceError('usage', `--capture-out applies to the coordinator_scoped_retrieval lane only; ${request.packet} was built for ${result.lane} (nothing written)`, {}, 2);
  }
  if (request.ledger !== undefined) {
    throw new LoretraceError('usage', `--ledger applies to the coordinator_scoped_retrieval lane only; ${request.packet} was built for ${result.lane} (nothing written)`, {}, 2);
  }
}

/**
 * Step 3: build the packet and plan every file of the run — the packet; for the coordinator lane the ledger
 * of the run's lookups (never overwritten: `ledger_exists`) and, when `captureOut` is given, the capture
 * fragment bound to it; the lock beside the packet over all of them and the inputs. Pure apart from the
 * ledger-exists check and the clock.
 * @throws what `buildPacket` throws (`invalid_draft`, `no_policy`, `seed_not_found`, …); `usage` (exit 2)
 *   from {@link checkLaneOutputs}; `ledger_exists` (exit 2, an output refused as `output_exists` is).
 */
/**
 * A policy from outside the draft whose seeds are on another scene (`policy_seed_off_scene`, src/packet/build.ts)
 * would ground the responder in that scene's lore: for training data that is a wrong packet, not a packet
 * with a warning. Refused unless `allowOffScenePolicy`, where the finding stays a warning.
 * @throws LoretraceError `policy_off_scene` (exit 1) with the finding's message, the policy file and pointer.
 */
function refuseOffScenePolicy(request: RetrieveRequest, result: BuildPacketResult): void {
  if (request.allowOffScenePolicy === true) return;
  const off = result.findings.find((f) => f.code === 'policy_seed_off_scene');
  if (off === undefined) return;
  throw new LoretraceError('policy_off_scene', `${off.message} Not built: a packet grounded in another scene's lore is wrong output; give this scene's policy, or pass --allow-off-scene-policy to build it anyway (nothing written)`, { ...(off.path !== undefined ? { file: off.path } : {}), ...(off.pointer !== undefined ? { pointer: off.pointer } : {}), expected: "a policy whose required seeds are on the draft's scene" }, 1);
}

export async function planRetrieveOutputs(index: VaultIndex, inputs: RetrieveInputs, request: RetrieveRequest, env: RetrieveRunEnv): Promise<RetrievePlan> {
  const result = await buildPacket(index, inputs.draft.value, {
    ...(request.lane !== undefined ? { lane: request.lane } : {}),
    ...(inputs.projectedContext !== null ? { projectedContext: inputs.projectedContext.value, projectedContextFile: request.projectedContext } : {}),
    ...(inputs.policyFile ? { policy: inputs.policyFile.policy, policyFile: request.policy, ...(inputs.policyFile.allowedScope ? { allowedScope: inputs.policyFile.allowedScope } : {}) } : {}),
    strictPolicy: request.strictPolicy === true,
    file: request.packet,
  });
  checkLaneOutputs(request, result);
  refuseOffScenePolicy(request, result);
  const outAbs = resolve(env.cwd, request.out);
  const label = request.labels ?? OPTION_FILE_LABELS;
  const targets: OutputTarget[] = [{ abs: outAbs, text: documentText(result.packet), option: label.out }];
  let recorded: ReturnType<typeof recordRetrieval> | null = null;
  let ledgerAbs: string | null = null;
  if (result.capture) {
    const ledgerFile = request.ledger ?? defaultLedgerPath(request.out);
    ledgerAbs = resolve(env.cwd, ledgerFile);
    if (await fileId(ledgerAbs) !== null) {
      throw new LoretraceError('ledger_exists', `ledger ${ledgerFile} already exists; a ledger is never appended to or overwritten — choose a new file${request.labels === undefined ? ' with --ledger' : ''} (nothing written)`, { file: ledgerFile, expected: 'a path that does not exist yet' }, 2);
    }
    // The ledger pins the packet this run writes (the one the responder is handed), so `capture --ledger`
    // binds a capture to it as it binds one to a proxy session's packet; `packet_file` is relative to the
    // ledger's folder, so the ledger does not depend on where the run wrote it. The draft's sha256 is in the lock.
    const packetSha256 = createHash('sha256').update(targets[0]!.text, 'utf8').digest('hex');
    recorded = recordRetrieval(index, result as { capture: NonNullable<BuildPacketResult['capture']>; queries: string[] }, {
      packetId: result.packet.packet_id, packetSha256, packetFile: relative(dirname(ledgerAbs), outAbs).split(sep).join('/'), ...(env.now ? { now: env.now } : {}),
      signer: env.signer ?? null,
    });
    targets.push({ abs: ledgerAbs, text: recorded.ledgerText, option: label.ledger });
    if (request.captureOut !== undefined) targets.push({ abs: resolve(env.cwd, request.captureOut), text: documentText(recorded.capture), option: label.captureOut });
  }
  targets.push(lockTarget(outAbs, {
    status: 'ready_for_next_role',
    command: 'retrieve',
    files: [...targets.map((t): LockInputFile => ({ abs: t.abs, role: 'output', content: t.text })), ...[inputs.draft, inputs.projectedContext, inputs.policy].flatMap((i) => (i ? [i.lock] : []))],
    snapshot: { namespace: index.namespace, snapshot_id: index.snapshot_id },
    policyReceipt: result.capture?.policy_receipt ?? null,
    ledger: recorded && ledgerAbs !== null ? { abs: ledgerAbs, ...recorded.binding.ledger } : null,
    traceBindings: (recorded?.binding.bindings ?? []).map((b) => ({ ...b, ledger_backed: true })),
  }));
  return { result, recorded, targets };
}

/**
 * One whole run over an open index: steps 1–4 of the module comment. Returns the plan whose targets were
 * written (absolute paths in `targets[].abs`).
 * @throws every error of the steps; nothing is written when one is thrown (`write_failed` names what was).
 */
export async function retrieveToFiles(index: VaultIndex, request: RetrieveRequest, env: RetrieveRunEnv): Promise<RetrievePlan> {
  await checkRetrieveTargets(request, env);
  const inputs = await readRetrieveInputs(request, env);
  const plan = await planRetrieveOutputs(index, inputs, request, env);
  await writeAllAtomic(plan.targets);
  return plan;
}
