/**
 * The path rules of a `policy_receipt` read back from its rows (schemas/policy-receipt.schema.json; row
 * kinds and clause shapes of src/policy/compile.ts), so a receipt kept beside a trace — in a capture
 * fragment, a lock, a ledger's `SESSION_OPENED` — can be held against what was read without the
 * traversal_policy it came from. `checkPath` (src/policy/compile.ts) is the enforcement; this module is
 * its reading for receipts, in the same order. Readers: trace verification (src/receipts/verify-trace.ts)
 * and ledger verification (src/receipts/ledger.ts).
 */
import { LoretraceError } from '../errors.js';
import type { NoteRecord, VaultIndex, VaultPath } from '../types.js';
import { getNote } from '../indexer/lookup.js';
import { hiddenSectionsOf } from '../policy/sections.js';
import type { HiddenSection } from '../policy/types.js';
import { isUnderPrefix, parseRef } from '../refs/ref.js';
import { parseStopCondition } from '../policy/stop-conditions.js';
import { preview } from '../contracts/rules.js';
import { isJsonObject } from '../contracts/json-object.js';

/** A `policy_receipt` value found in a document, with its pointer (or a words-and-pointer label). */
export interface ReceiptAt {
  pointer: string;
  value: unknown;
}

/** Options of {@link readReceiptRules}. */
export interface ReadReceiptOptions {
  /** Namespace of the vault the receipt was compiled against (clauses are refs of it). */
  namespace: string;
  /** The vault index, for rows that need the snapshot (hidden sections, note classes); optional. */
  index?: VaultIndex;
  /** File or label named in error messages. */
  where: string;
  /** Error code thrown for a receipt that cannot be read (`bad_trace_input`, `ledger_bad_record`). */
  code: string;
}

/** A receipt row that denies paths, with the test it applies (mirrors `checkPath`, src/policy/compile.ts). */
export interface ReceiptDeny {
  /** Pointer of the row in the input, e.g. `/policy_receipt/12`. */
  row: string;
  kind: string;
  clause: string;
  /** What the denial is, for the detail: `hidden lore`, `a denied prefix`, `future-era lore`, … */
  what: string;
  /** `lines`: the entry's cited range (1-based, inclusive), for rows that deny a section of a note only. */
  denies: (path: string, note: NoteRecord | undefined, lines: readonly [number, number]) => boolean;
}

/**
 * The path rules of a `policy_receipt`, read back from its rows (kinds and clause shapes of
 * src/policy/compile.ts):
 * - `allowed_prefix`: clause = the prefix as written (`FixtureLore:World/Pre-Elysium/` or one note);
 * - `hidden_ref` (enforced): clause = the hidden_context_audit ref; denies the path and, for a note ref
 *   written without `.md`, `<path>.md` (advisory rows are refs compilePolicy could not parse: nothing to deny);
 *   a `Note.md#Heading` ref whose heading this snapshot has denies only entries whose lines overlap that
 *   section (src/policy/sections.ts);
 * - `hidden_prefix`: clause = the config prefix as written; `hidden_note`: clause = the note's vault path;
 * - `future_era_prefix`: clause = the vault prefix; waived below an allowed prefix that lies inside it;
 * - `stop_condition` (enforced): `deny_prefix:P` and `deny_class:C` effects (parseStopCondition).
 */
export interface ReceiptRules {
  pointer: string;
  rows: number;
  allowed: { row: string; clause: string; path: string }[];
  /** In checkPath order: hidden rows, future-era rows, then (after the prefix check) deny_prefix, deny_class. */
  before: ReceiptDeny[];
  after: ReceiptDeny[];
  /** The `max_link_depth` row: links are followed at most `depth` hops from a seed or scope note (depth 0). */
  max_link_depth: { row: string; depth: number } | null;
  /**
   * The hidden sections its `Note.md#Heading` hidden_ref rows resolve to in this snapshot (lines 1-based,
   * inclusive, on disk), in row order; [] without the vault. The proxy served such a note in its line view
   * (src/proxy/withhold.ts `lineView`), which trace verification reads a responder's citations in.
   */
  sections: HiddenSection[];
}

/**
 * Read the path rules of a `policy_receipt` (`at.value`, found at `at.pointer`). Null when `at` is null.
 * Without `options.index`, rows that need the vault are left unchecked: a `Note.md#Heading` hidden_ref
 * (its section's lines come from the snapshot) and `deny_class` (a note's classes); every other row needs
 * only the namespace.
 * @throws LoretraceError `options.code` (with the row's pointer) when the receipt is not an array of rows,
 *   a row lacks `clause`/`kind`/`disposition` strings, a clause the rules need is not a lore ref of this
 *   vault, or a non-empty receipt has no `allowed_prefix` row (compilePolicy always writes one per allowed prefix).
 */
export function readReceiptRules(at: ReceiptAt | null, options: ReadReceiptOptions): ReceiptRules | null {
  if (at === null) return null;
  const { namespace: ns, index, where, code } = options;
  const bad = (pointer: string, message: string, expected: string): never => {
    throw new LoretraceError(code, `${where}: ${message}`, { file: where, pointer, expected });
  };
  if (!Array.isArray(at.value)) {
    bad(at.pointer, `${at.pointer} must be an array of policy receipt rows (got ${preview(at.value, 100)})`, 'the policy_receipt rows of schemas/policy-receipt.schema.json ($defs/rows)');
  }
  const rows = at.value as unknown[];
  const rules: ReceiptRules = { pointer: at.pointer, rows: rows.length, allowed: [], before: [], after: [], max_link_depth: null, sections: [] };
  const future: { row: string; clause: string; prefix: string }[] = [];
  const ref = (input: string, row: string, kind: string) => {
    try {
      return parseRef(input, { namespace: ns, label: `policy_receipt row ${row} (${kind})` });
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      return bad(row, `${msg}; expected the receipt of a policy compiled against vault ${ns}`, `a lore ref of vault ${ns}`);
    }
  };
  rows.forEach((r, i) => {
    const row = `${at.pointer}/${i}`;
    if (!isJsonObject(r) || typeof r['clause'] !== 'string' || typeof r['kind'] !== 'string' || typeof r['disposition'] !== 'string') {
      bad(row, `${row} must be a policy receipt row with string clause, kind and disposition (got ${preview(r, 100)})`, 'a row of schemas/policy-receipt.schema.json ($defs/row)');
    }
    const { clause, kind, disposition } = r as { clause: string; kind: string; disposition: string };
    switch (kind) {
      case 'max_link_depth':
        if (/^(0|[1-9][0-9]{0,5})$/.test(clause)) rules.max_link_depth = { row, depth: Number(clause) };
        break;
      case 'allowed_prefix':
        rules.allowed.push({ row, clause, path: ref(clause, row, kind).path });
        break;
      case 'hidden_ref': {
        if (disposition !== 'enforced') break;
        const h = ref(clause, row, kind);
        const paths = [h.path as string];
        if (!h.is_prefix && !h.path.endsWith('.md')) paths.push(h.path + '.md');
        // `Note.md#Heading`: that section only, resolved in this snapshot as compilePolicy resolves it
        // (a heading that is not there hides the whole note, as there).
        // Without the vault a section cannot be resolved: the row is left unchecked rather than made to
        // hide the whole note (which would flag reads of the note's visible parts).
        if (h.fragment?.kind === 'heading' && index === undefined) break;
        const sectionNote = h.fragment?.kind === 'heading' && index !== undefined ? paths.map((p) => getNote(index, p as VaultPath)).find((n) => n !== undefined) : undefined;
        const found = sectionNote && index !== undefined ? hiddenSectionsOf(index, sectionNote, h, row) : [];
        // Every heading of that name is a hidden section (hiddenSectionsOf), as compilePolicy hides them.
        for (const section of found) {
          rules.sections.push(section);
          rules.before.push({
            row, kind, clause, what: `hidden lore (lines ${section.line_start}-${section.line_end} are a hidden section)`,
            denies: (p, _note, lines) => p === section.path && lines[0] <= section.line_end && lines[1] >= section.line_start,
          });
        }
        if (found.length > 0) break;
        rules.before.push({ row, kind, clause, what: 'hidden lore', denies: (p) => paths.some((x) => isUnderPrefix(p, x)) });
        break;
      }
      case 'hidden_prefix':
      case 'hidden_note': {
        const h = ref(clause, row, kind).path;
        rules.before.push({ row, kind, clause, what: 'hidden lore', denies: (p) => isUnderPrefix(p, h) });
        break;
      }
      case 'future_era_prefix':
        future.push({ row, clause, prefix: ref(clause, row, kind).path });
        break;
      case 'stop_condition': {
        if (disposition !== 'enforced') break;
        const parsed = parseStopCondition(clause);
        if (parsed.form !== 'token' && parsed.form !== 'english') break;
        for (const effect of parsed.effects) {
          if (effect.kind === 'deny_prefix') {
            const d = ref(effect.value, row, 'deny_prefix').path;
            rules.after.push({ row, kind, clause, what: `under the denied prefix ${d}`, denies: (p) => isUnderPrefix(p, d) });
          } else if (effect.kind === 'deny_class') {
            const cls = effect.value;
            rules.after.push({ row, kind, clause, what: `a note of the denied class ${cls}`, denies: (_p, note) => note !== undefined && note.classes.includes(cls) });
          }
        }
        break;
      }
      default:
        break;
    }
  });
  if (rows.length > 0 && rules.allowed.length === 0) {
    bad(at.pointer, `${at.pointer} has ${rows.length} row${rows.length === 1 ? '' : 's'} but no allowed_prefix row, so it admits nothing; expected the receipt of a compiled traversal_policy (one allowed_prefix row per allowed prefix)`, 'at least one allowed_prefix row');
  }
  for (const f of future) {
    const waivers = rules.allowed.map((a) => a.path).filter((a) => isUnderPrefix(a, f.prefix));
    rules.before.push({
      row: f.row,
      kind: 'future_era_prefix',
      clause: f.clause,
      what: 'future-era lore',
      denies: (p) => isUnderPrefix(p, f.prefix) && !waivers.some((w) => isUnderPrefix(p, w)),
    });
  }
  return rules;
}

/**
 * Does the receipt admit `path`? Null when it does, else the detail of the first row that refuses it,
 * in `checkPath` order: hidden rows, future-era rows, the allowed_prefix rows, deny_prefix, deny_class.
 * `lines` (1-based, inclusive) is the range read, for rows that hide one section of a note; `expected`
 * ends the detail (what the caller expected instead).
 */
export function receiptDenial(rules: ReceiptRules, path: string, note: NoteRecord | undefined, lines: readonly [number, number], expected: string): string | null {
  const denied = (d: ReceiptDeny) => `${path} is ${d.what}: policy_receipt row ${d.row} (${d.kind} ${preview(d.clause, 100)}) denies it; ${expected}`;
  for (const d of rules.before) if (d.denies(path, note, lines)) return denied(d);
  if (!rules.allowed.some((a) => isUnderPrefix(path, a.path))) {
    const list = rules.allowed.map((a) => `${a.row} ${preview(a.clause, 100)}`).join(', ');
    return `${path} lies outside every allowed_prefix row of the policy_receipt (${list}); ${expected}`;
  }
  for (const d of rules.after) if (d.denies(path, note, lines)) return denied(d);
  return null;
}
