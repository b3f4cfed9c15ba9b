/**
 * Notes that hide themselves in frontmatter (docs/TRAVERSAL.md "hidden_note"): every spelling of
 * lore-fixtures/MarkerLore — a `visibility` value that is not a public one, a marker key with any value but a
 * false one, a hiding tag, a repeated marker key — is denied by the policy, so the traverse walk, `retrieve`
 * and the proxy all leave the note out, while the notes marked visible stay readable.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { indexVault } from '../src/indexer/build.js';
import { YAML_OPTIONS, readFrontmatter } from '../src/notes/frontmatter.js';
import { checkPath, compilePolicy } from '../src/policy/index.js';
import type { TraversalPolicy } from '../src/contracts/types.js';
import { traverse } from '../src/traversal/index.js';
import type { VaultIndex } from '../src/types.js';
import type { ProxySession } from '../src/proxy/session.js';
import { FIXTURES, REPO } from './helpers/shared.js';
import { fixtureSession, readLedger } from './helpers/proxy.js';

const VAULT = join(FIXTURES, 'MarkerLore');
const PACKET = join(FIXTURES, 'packets', 'marker-hiding.research.packet.json');
const POLICY_FILE = join(FIXTURES, 'policies', 'marker-hiding.policy.json');
const DRAFT_FILE = join(FIXTURES, 'packets', 'brinefall-intake.turn-01.mara-voss.draft.packet.json');
const CONTEXT_FILE = join(FIXTURES, 'packets', 'brinefall-intake.turn-01.mara-voss.projected-context.json');
const POLICY = JSON.parse(readFileSync(POLICY_FILE, 'utf8')) as TraversalPolicy;

/** Every hidden note of MarkerLore with the receipt's `hidden_note` rule (key and value as written). */
const HIDDEN: [string, string, string][] = [
  ['Author Camel.md', 'authorOnly', 'its frontmatter marks it authorOnly: true'],
  ['Author Dash.md', 'author-only', 'its frontmatter marks it author-only: true'],
  ['Author Under.md', 'author_only', 'its frontmatter marks it author_only: yes?'],
  ['Authoronly.md', 'authoronly', 'its frontmatter marks it authoronly: YES'],
  ['Body Tag Child.md', '#/tags/status~1author-only', 'its body tags it #status/author-only (line 3)'],
  ['Body Tag.md', '#/tags/secret', 'its body tags it #secret (line 3)'],
  ['Complex Key.md', 'frontmatter', 'its frontmatter block cannot be parsed (bad_frontmatter), so it may be marked author-only; denied until it parses (fail closed)'],
  ['Displaced.md', 'frontmatter', 'its text opens with blank lines and then a `---` block (displaced_frontmatter): Obsidian does not read it as frontmatter, but it may be meant to mark the note author-only; denied until the blank lines are removed (fail closed)'],
  ['Doc End.md', 'frontmatter', 'its `---` block at the top is closed by the YAML end marker `...` (displaced_frontmatter): Obsidian does not read it as frontmatter, but it may be meant to mark the note author-only; denied until it is closed with `---` (fail closed)'],
  ['Dup Private.md', 'visibility', 'its frontmatter repeats a visibility key, so one of its values may mark it author-only; denied until the repeat is removed (fail closed)'],
  ['GM Only.md', 'gm_only', 'its frontmatter marks it gm_only: 1'],
  ['Hidden On.md', 'hidden', 'its frontmatter marks it hidden: on'],
  ['Hidden One.md', 'hidden', 'its frontmatter marks it hidden: 1'],
  ['Merge Key.md', 'visibility', 'its frontmatter marks it visibility: author-only'],
  ['Merge Override.md', 'visibility', 'its frontmatter repeats a visibility key, so one of its values may mark it author-only; denied until the repeat is removed (fail closed)'],
  ['Nested List.md', 'notes/1/secret', 'its frontmatter marks it notes.1.secret: yes'],
  ['Nested Meta.md', 'meta/visibility', 'its frontmatter marks it meta.visibility: author-only'],
  ['Private.md', 'private', 'its frontmatter marks it private: On'],
  ['Publish Off.md', 'publish', 'its frontmatter marks it publish: false (Obsidian Publish\'s opt-out)'],
  ['Secret.md', 'secret', 'its frontmatter marks it secret: true'],
  ['Tag Child.md', 'tags', 'its frontmatter tags it tags: lore/hidden'],
  ['Tag GM.md', 'tags', 'its frontmatter tags it tags: gm-only'],
  ['Tag List.md', 'tags', 'its frontmatter tags it tags: author-only'],
  ['Tag Nested.md', 'tags', 'its frontmatter tags it tags: hidden/draft'],
  ['Tag Private.md', 'tags', 'its frontmatter tags it tags: private'],
  ['Tag Spoiler.md', 'tags', 'its frontmatter tags it tags: spoiler'],
  ['Tag String.md', 'tags', 'its frontmatter tags it tags: #secret'],
  ['Vis Author Only.md', 'visibility', 'its frontmatter marks it visibility: author only'],
  ['Vis Empty.md', 'visibility', 'its frontmatter marks it visibility: null'],
  ['Vis Secret.md', 'visibility', 'its frontmatter marks it visibility: secret'],
];
const HIDDEN_NAMES = HIDDEN.map(([f]) => f.replace(/\.md$/, ''));
/**
 * The notes marked visible (`visibility: Public`, a list of public values, false markers, a look-alike tag,
 * public nested keys, `publish: true`, `#secret` only in a code span and a code block) and the seed, sorted.
 */
const VISIBLE = ['Code Tag', 'Harbor Board', 'Nested Public', 'Not Hidden', 'Players', 'Public Note', 'Publish On', 'Tagged'];
/** The visible notes the seed links to. */
const LINKED = VISIBLE.filter((n) => n !== 'Harbor Board');

let index: VaultIndex;
let tmp: string;
beforeAll(async () => {
  index = await indexVault(VAULT, { persist: false, workers: false });
  tmp = mkdtempSync(join(tmpdir(), 'loretrace-markers-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('compilePolicy: hidden_note rows for every marker spelling', () => {
  it('denies each marked note with a row naming the key and value, and leaves the visible ones alone', () => {
    const c = compilePolicy(POLICY, { index });
    const rows = c.receipt.filter((r) => r.kind === 'hidden_note').map((r) => [r.clause, r.pointer, r.rule]);
    const pointer = (f: string, key: string) => (key.startsWith('#/tags/') ? `#/tags/Harbor~1${f}/${key.slice(7)}` : `#/frontmatter/Harbor~1${f}/${key}`);
    expect(rows).toEqual(HIDDEN.map(([f, key, why]) => [`Harbor/${f}`, pointer(f, key), `never consult Harbor/${f} (${why})`]));
    for (const name of VISIBLE) expect(checkPath(c, `Harbor/${name}.md` as never).ok).toBe(true);
    for (const [f] of HIDDEN) expect(checkPath(c, `Harbor/${f}` as never)).toMatchObject({ ok: false, reason: 'hidden_ref' });
  });
});

describe('notes stage: merge keys resolved, a merge that repeats a key and a displaced block reported', () => {
  it('reads `<<` merges into the mapping and gives the exact findings', () => {
    const note = (f: string) => index.notes.find((n) => n.path === `Harbor/${f}`)!;
    expect(note('Merge Key.md').frontmatter).toEqual({ visibility: 'author-only' });
    expect(note('Merge Override.md').frontmatter).toEqual({ visibility: 'public' });
    expect(note('Displaced.md').frontmatter).toBeNull();
    const findings = index.findings.filter((f) => ['Harbor/Merge Override.md', 'Harbor/Displaced.md', 'Harbor/Merge Key.md', 'Harbor/Doc End.md', 'Harbor/Complex Key.md'].includes(f.path ?? '')).map((f) => [f.code, f.line, f.message]);
    expect(findings).toEqual([
      ['bad_frontmatter', 2, 'Harbor/Complex Key.md:2: frontmatter has a key that is a collection (a YAML complex key, `? [...]` or `? {...}`), which has no JSON form; its lines are indexed as body text (chunked, searchable, with their links), without frontmatter fields'],
      ['displaced_frontmatter', 3, 'Harbor/Displaced.md:3: a `---` block after 2 blank lines at the top of the note is not frontmatter (Obsidian reads frontmatter only from the first line), so its keys are body text; remove the blank lines to make it frontmatter'],
      ['displaced_frontmatter', 1, 'Harbor/Doc End.md:1: a `---` block at the top of the note closed by the YAML document-end marker `...` (line 3) is not frontmatter (Obsidian closes frontmatter only with `---`), so its keys are body text; close it with `---` to make it frontmatter'],
      ['duplicate_frontmatter_key', 3, 'Harbor/Merge Override.md:3: frontmatter key "visibility" is repeated (set in its mapping and by the `<<` merge key on this line); the mapping\'s own value is kept (YAML merge keys)'],
    ]);
  });
});

describe('notes stage: tags in code are no tags, and the yaml package prints nothing', () => {
  it('reads no tag from a code span or a code block, and body tags as the note\'s tags', () => {
    const note = (f: string) => index.notes.find((n) => n.path === `Harbor/${f}`)!;
    expect(note('Code Tag.md').tags).toEqual([]);
    expect(note('Body Tag.md').tags).toEqual(['harbor', 'secret']);
    expect(note('Complex Key.md').frontmatter).toBeNull();
    expect(note('Doc End.md').frontmatter).toBeNull();
  });

  it('parses a complex key without a warning on stderr or a process warning', () => {
    const writes: string[] = [];
    const warnings: unknown[] = [];
    const write = process.stderr.write.bind(process.stderr);
    const onWarning = (w: unknown) => void warnings.push(w);
    const warn = console.warn;
    process.stderr.write = ((chunk: string | Uint8Array) => (writes.push(String(chunk)), true)) as typeof process.stderr.write;
    console.warn = (...args: unknown[]) => void writes.push(args.map(String).join(' '));
    process.on('warning', onWarning);
    try {
      const fm = readFrontmatter('W/Complex.md', '? [visibility]\n: author-only\n', 2);
      expect(fm.data).toBeNull();
      expect(fm.findings.map((f) => [f.code, f.line])).toEqual([['bad_frontmatter', 2]]);
      expect(YAML_OPTIONS.logLevel).toBe('silent');
    } finally {
      process.stderr.write = write;
      console.warn = warn;
    }
    return new Promise<void>((done) => setImmediate(() => {
      process.off('warning', onWarning);
      expect([writes, warnings]).toEqual([[], []]);
      done();
    }));
  });
});

describe('traverse: the walk never consults a marked note', () => {
  it('follows the seed\'s links to the visible notes only', () => {
    const result = traverse(index, compilePolicy(POLICY, { index }), { queries: ['moonrise notice berth'] });
    const consulted = [...new Set(result.source_excerpts.map((e) => e.source_ref.replace(/#.*$/, '')))].sort();
    expect(consulted).toEqual(VISIBLE.map((n) => `MarkerLore:Harbor/${n}.md`));
    const text = JSON.stringify(result.source_excerpts);
    for (const n of HIDDEN_NAMES) expect(text).not.toContain(`the ${n.toLowerCase()} berth`);
  });
});

describe('retrieve: the packet holds no marked note', () => {
  it('builds excerpts from the visible notes only', async () => {
    const out = join(tmp, 'retrieve', 'packet.json');
    let err = '';
    const code = await main(['retrieve', '--lore', VAULT, '--packet', DRAFT_FILE, '--projected-context', CONTEXT_FILE, '--policy', POLICY_FILE, '--out', out],
      { stdout: () => {}, stderr: (t) => void (err += t), env: { LORETRACE_INDEX_DIR: join(tmp, 'index'), SOURCE_DATE_EPOCH: '1735689600' }, cwd: REPO, isTTY: false });
    expect([code, err]).toEqual([0, '']);
    const packet = readFileSync(out, 'utf8');
    for (const n of HIDDEN_NAMES) {
      expect(packet).not.toContain(`MarkerLore:Harbor/${n}.md`);
      expect(packet).not.toContain(`the ${n.toLowerCase()} berth`);
    }
    expect(packet).toContain('MarkerLore:Harbor/Harbor Board.md');
  });
});

describe('proxy: a marked note is not served, listed, followed or searched', () => {
  let session: ProxySession | null = null;
  afterEach(async () => {
    await session?.close();
    session = null;
  });

  it('answers reads and follows of a marked note as of a missing one, and finds only visible hits', async () => {
    const ledgerPath = join(tmp, 'proxy.jsonl');
    session = await fixtureSession({ ledgerPath, lore: VAULT, packetPath: PACKET });
    const board = 'MarkerLore:Harbor/Harbor Board.md';
    const links = await session.call('lore_links', { ref: board });
    if (!links.ok) throw new Error(JSON.stringify(links.refusal));
    const byTarget = Object.fromEntries((links.result as any).links.map((l: any) => [l.target, [l.target_ref, l.follow.code]]));
    for (const n of HIDDEN_NAMES) expect(byTarget[n]).toEqual([null, 'not_found']);
    for (const n of LINKED) expect(byTarget[n]).toEqual([`MarkerLore:Harbor/${n}.md`, null]);
    for (const n of HIDDEN_NAMES) {
      const read = await session.call('lore_read', { ref: `MarkerLore:Harbor/${n}.md` });
      expect(read.ok ? null : read.refusal).toEqual({ code: 'not_found', message: `no admitted note matches ${JSON.stringify(`MarkerLore:Harbor/${n}.md`)} in this session's index` });
      const follow = await session.call('lore_follow', { from_ref: board, target: n });
      expect(follow.ok ? null : follow.refusal).toEqual({ code: 'not_found', message: `no link in ${board} leads to ${JSON.stringify(n)}; lore_follow only follows links that exist in the note` });
      expect(readLedger(ledgerPath)[follow.seq]!.outcome).toMatchObject({ status: 'refused', reason: 'hidden_ref' });
    }
    for (const n of LINKED) expect((await session.call('lore_follow', { from_ref: board, target: n })).ok).toBe(true);
    const search = await session.call('lore_search', { query: 'moonrise notice berth', k: 20 });
    if (!search.ok) throw new Error(JSON.stringify(search.refusal));
    expect([...new Set((search.result as any).results.map((h: any) => h.path as string))].sort()).toEqual(VISIBLE.map((n) => `Harbor/${n}.md`));
  });
});
