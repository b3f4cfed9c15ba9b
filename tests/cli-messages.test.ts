/**
 * What a newcomer types and reads: `show` and `links` by note title or alias with "did you mean" suggestions,
 * `index` listing its broken and ambiguous links, `verify-trace` and `retrieve` given the wrong kind of
 * document, and `serve --limit` naming the limits. Exact outputs on FixtureLore.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { indexVault } from '../src/indexer/build.js';
import { notesNamed, suggestHeadings, resolveRefOrName, suggestNotes } from '../src/refs/names.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURE_VAULT, REPO } from './helpers/shared.js';

let indexDir: string;
let index: VaultIndex;
beforeAll(async () => {
  indexDir = mkdtempSync(join(tmpdir(), 'lt-cli-messages-'));
  index = await indexVault(FIXTURE_VAULT, { persist: false, workers: false });
});
afterAll(() => rmSync(indexDir, { recursive: true, force: true }));

async function run(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: {}, cwd: REPO, isTTY: false });
  return { code, stdout, stderr };
}
const vault = ['--lore', 'lore-fixtures/FixtureLore'];
const withIndex = () => [...vault, '--index-dir', indexDir];

describe('notesNamed', () => {
  it('finds a note by title, alias, file name and extension-less path, case-insensitively', () => {
    const one = (name: string) => notesNamed(index, name).map((n) => [n.path, n.by, n.matched]);
    expect(one('harbor neutrality')).toEqual([['World/Politics/Harbor Neutrality.md', 'title', 'Harbor Neutrality']]);
    expect(one('FRONT PAGE')).toEqual([['Home.md', 'alias', 'Front Page']]);
    expect(one('Fixture Home')).toEqual([['Home.md', 'title', 'Fixture Home']]);
    expect(one('Home')).toEqual([['Home.md', 'file_name', 'Home']]);
    expect(one('World/Politics/Harbor Neutrality')).toEqual([['World/Politics/Harbor Neutrality.md', 'path', 'World/Politics/Harbor Neutrality']]);
    expect(one('Lantern Relay')).toEqual([['Edge/Alpha/Lantern Relay.md', 'title', 'Lantern Relay'], ['Edge/Beta/Lantern Relay.md', 'title', 'Lantern Relay']]);
    expect(one('Nowhere Note')).toEqual([]);
  });
});

describe('suggestNotes', () => {
  it('suggests the notes whose names are a few edits away or contain the text, best first', () => {
    expect(suggestNotes(index, 'Meridan Compact').map((s) => s.path)).toEqual(['World/Pre-Elysium/Factions/Powers/Major/Meridian Compact.md']);
    expect(suggestNotes(index, 'FixtureLore:Harbour Neutrality#L1').map((s) => [s.path, s.matched])).toEqual([['World/Politics/Harbor Neutrality.md', 'Harbor Neutrality']]);
    expect(suggestNotes(index, 'zzzzqqq')).toEqual([]);
  });
});

describe('resolveRefOrName', () => {
  it('resolves a ref first, then a name with its fragment', () => {
    const r = resolveRefOrName(index, 'Brinefall Blackout#Aftermath');
    expect([r.range.path, r.range.line_start, r.range.line_end, r.named?.by]).toEqual(['World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md', 9, 13, 'title']);
    expect(resolveRefOrName(index, 'FixtureLore:Home.md').named).toBeNull();
  });
});

describe('loretrace show', () => {
  it('shows a note by its title, and by an alias with a fragment, saying which name found it', async () => {
    expect(await run(['show', 'Harbor Neutrality', ...withIndex()])).toEqual({
      code: 0,
      stderr: '',
      stdout:
        'FixtureLore:World/Politics/Harbor Neutrality.md  (lines 1-6, title "Harbor Neutrality")\n' +
        '1 │ # Harbor Neutrality\n' +
        '2 │\n' +
        '3 │ A neutral pier shelters any crew in a storm, regardless of flag or debt.\n' +
        '4 │\n' +
        '5 │ Neutral piers are funded by a levy on every insured hull, collected by [[Halcyon Mutual]].\n' +
        '6 │ Breaking neutrality is the one crime every harbor agrees to punish, and the precedent is [[Salvage Law]].\n',
    });
    const alias = await run(['show', 'front page#L1-L3', ...withIndex()]);
    expect(alias).toEqual({ code: 0, stderr: '', stdout: 'FixtureLore:Home.md#L1-L3  (lines 1-3, alias "Front Page")\n1 │ ---\n2 │ title: Fixture Home\n3 │ aliases: [Start, Front Page]\n' });
  });

  it('answers an unknown name with did-you-mean suggestions from titles and aliases (exit 1)', async () => {
    expect(await run(['show', 'Meridan Compact', ...withIndex()])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'loretrace: ref FixtureLore:Meridan Compact: no note Meridan Compact in vault FixtureLore; no note has that title or alias either — did you mean FixtureLore:World/Pre-Elysium/Factions/Powers/Major/Meridian Compact.md ("Meridian Compact")? [not_found]\n',
    });
    expect(await run(['show', 'Frnt Page', ...withIndex()])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'loretrace: ref FixtureLore:Frnt Page: no note Frnt Page in vault FixtureLore; no note has that title or alias either — did you mean FixtureLore:Home.md (alias "Front Page")? [not_found]\n',
    });
    expect(await run(['show', 'zzzzqqq', ...withIndex()])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'loretrace: ref FixtureLore:zzzzqqq: no note zzzzqqq in vault FixtureLore; no note has that title or alias either [not_found]\n',
    });
  });

  it('names every note a shared name fits, and keeps a missing fragment of a found note a plain not_found', async () => {
    expect(await run(['show', 'Lantern Relay', ...withIndex()])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'loretrace: "Lantern Relay" names 2 notes: FixtureLore:Edge/Alpha/Lantern Relay.md ("Lantern Relay"), FixtureLore:Edge/Beta/Lantern Relay.md ("Lantern Relay"); give the ref of one [ambiguous_ref]\n',
    });
    expect(await run(['show', 'Harbor Neutrality#No Such', ...withIndex()])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'loretrace: ref FixtureLore:World/Politics/Harbor Neutrality.md#No Such: no heading "No Such" in World/Politics/Harbor Neutrality.md [not_found]\n',
    });
    expect(await run(['show', '../etc', ...withIndex()])).toEqual({ code: 1, stdout: '', stderr: 'loretrace: ref "../etc" is not a valid lore ref: it contains a ".." segment [bad_ref]\n' });
  });

  it('suggests the note\'s headings for a partial heading (did you mean), by ref or by name', async () => {
    expect(await run(['show', 'Territories#Brinefall', ...withIndex()])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'loretrace: ref FixtureLore:World/Pre-Elysium/Territories.md#Brinefall: no heading "Brinefall" in World/Pre-Elysium/Territories.md — did you mean FixtureLore:World/Pre-Elysium/Territories.md#Brinefall Shelf? [not_found]\n',
    });
    expect(await run(['show', 'FixtureLore:World/Pre-Elysium/Territories.md#reach', ...withIndex()])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'loretrace: ref FixtureLore:World/Pre-Elysium/Territories.md#reach: no heading "reach" in World/Pre-Elysium/Territories.md — did you mean FixtureLore:World/Pre-Elysium/Territories.md#Kestrel Reach? [not_found]\n',
    });
    const note = index.notes.find((n) => n.path === 'World/Pre-Elysium/Territories.md')!;
    expect(suggestHeadings(note, 'shelf')).toEqual(['Brinefall Shelf']);
    expect(suggestHeadings(note, 'shelf', (h) => h.text !== 'Brinefall Shelf')).toEqual([]);
  });
});

describe('loretrace links by note name', () => {
  it('finds the note by title or alias as show does, and suggests names when none matches', async () => {
    const byTitle = await run(['links', 'Harbor Neutrality', '--json', ...withIndex()]);
    expect(byTitle.code).toBe(0);
    const out = JSON.parse(byTitle.stdout);
    expect([out.ref, out.path]).toEqual(['FixtureLore:World/Politics/Harbor Neutrality.md', 'World/Politics/Harbor Neutrality.md']);
    expect(JSON.parse((await run(['links', 'FixtureLore:World/Politics/Harbor Neutrality.md', '--json', ...withIndex()])).stdout)).toEqual(out);
    const byAlias = await run(['links', 'front page', ...withIndex()]);
    expect([byAlias.code, byAlias.stdout.split('\n')[0]]).toEqual([0, 'FixtureLore:Home.md']);
    expect(await run(['links', 'Meridan Compact', ...withIndex()])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'loretrace: ref FixtureLore:Meridan Compact: no note Meridan Compact in vault FixtureLore; no note has that title or alias either — did you mean FixtureLore:World/Pre-Elysium/Factions/Powers/Major/Meridian Compact.md ("Meridian Compact")? [not_found]\n',
    });
    expect((await run(['links', 'Lantern Relay', ...withIndex()])).stderr).toBe('loretrace: "Lantern Relay" names 2 notes: FixtureLore:Edge/Alpha/Lantern Relay.md ("Lantern Relay"), FixtureLore:Edge/Beta/Lantern Relay.md ("Lantern Relay"); give the ref of one [ambiguous_ref]\n');
  });
});

describe('loretrace search', () => {
  it('refuses an empty or blank query as a usage error (exit 2), as the proxy refuses it, never "No results"', async () => {
    for (const q of ['', '   ']) {
      expect(await run(['search', q, ...withIndex()])).toEqual({
        code: 2, stdout: '', stderr: `loretrace: the query must be non-empty search words (got ${JSON.stringify(q)}); see 'loretrace search --help' [usage]\n`,
      });
    }
  });
});

describe('loretrace index', () => {
  it('lists the broken and ambiguous links with file:line:column in the text output', async () => {
    const r = await run(['index', ...withIndex()]);
    expect(r.code).toBe(0);
    const list = r.stdout.slice(r.stdout.indexOf('  broken and ambiguous links'));
    expect(list).toBe(
      '  broken and ambiguous links (9)\n' +
        '    warning unresolved_link: unresolved wikilink [[Missing Harbor Charter]] in Coverage/Harbor Ledger.md:16:33: no note or file matches "Missing Harbor Charter"\n' +
        '    info ambiguous_link: ambiguous wikilink [[Lantern Relay]] in Edge/Alpha/Lantern Relay.md:3:10: 2 notes match "Lantern Relay"; resolved to Edge/Alpha/Lantern Relay.md (candidates: Edge/Alpha/Lantern Relay.md, Edge/Beta/Lantern Relay.md)\n' +
        '    info ambiguous_link: ambiguous wikilink [[Lantern Relay]] in Edge/Links.md:9:33: 2 notes match "Lantern Relay"; resolved to Edge/Beta/Lantern Relay.md (candidates: Edge/Beta/Lantern Relay.md, Edge/Alpha/Lantern Relay.md)\n' +
        '    warning unresolved_link: unresolved wikilink [[Nowhere Note]] in Edge/Links.md:24:1: no note or file matches "Nowhere Note"\n' +
        '    warning broken_fragment: broken fragment in heading link [[Headings#No Such Heading]] at Edge/Links.md:24:19: Edge/Headings.md has no heading "No Such Heading"\n' +
        '    warning broken_fragment: broken fragment in block link [[Blocks#^missing]] at Edge/Links.md:24:49: Edge/Blocks.md has no block ^missing\n' +
        '    warning unresolved_link: unresolved embed ![[Missing.png]] in Edge/Links.md:24:70: no note or file matches "Missing.png"\n' +
        '    info ambiguous_link: ambiguous wikilink [[Lantern Relay]] in Home.md:13:3: 2 notes match "Lantern Relay"; resolved to Edge/Beta/Lantern Relay.md (candidates: Edge/Beta/Lantern Relay.md, Edge/Alpha/Lantern Relay.md)\n' +
        '    warning unresolved_link: unresolved wikilink [[Drowned Archive]] in World/Pre-Elysium/Factions/Powers/Major/Meridian Compact.md:22:112: no note or file matches "Drowned Archive"\n',
    );
  });
});

describe('wrong kind of document', () => {
  it('verify-trace on a research packet says a packet carries no trace and what to pass instead', async () => {
    expect(await run(['verify-trace', ...withIndex(), 'lore-fixtures/packets/proxy-fixture-research.packet.json'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'loretrace: lore-fixtures/packets/proxy-fixture-research.packet.json is a responder packet (ghostlight.responder_packet.v0, responder_scoped_repository_search): a packet carries no trace; pass its capture or the ledger (loretrace serve --ledger) [no_research_trace]\n',
    });
    expect((await run(['verify-trace', ...withIndex(), 'lore-fixtures/artifacts/packet.harbor.json'])).stderr).toBe(
      'loretrace: lore-fixtures/artifacts/packet.harbor.json is a responder packet (ghostlight.responder_packet.v0, coordinator_scoped_retrieval): a packet carries no trace; pass its capture or the capture fragment (loretrace retrieve --capture-out) [no_research_trace]\n',
    );
  });

  it('retrieve --packet <a capture> names the wrong schema_version first, in one line', async () => {
    const out = join(indexDir, 'never-written.json');
    expect(await run(['retrieve', ...withIndex(), '--packet', 'lore-fixtures/artifacts/capture.harbor.json', '--out', out])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'loretrace: lore-fixtures/artifacts/capture.harbor.json has schema_version "ghostlight.responder_output.v0", a responder output capture; pass the draft packet it was made from; --packet takes a draft responder packet (schema_version "ghostlight.responder_packet.v0") [invalid_draft]\n',
    });
  });
});

describe('loretrace serve --limit', () => {
  const names = 'max_calls, max_k, default_k, max_results, max_chars_returned, max_chars_per_read, max_query_chars, max_ref_chars, rate_burst, rate_per_second, max_body_bytes, max_url_chars, ledger_max_arg_chars';
  it('names every limit in the error for an unknown one and in --help', async () => {
    expect(await run(['serve', ...vault, '--packet', 'x.json', '--ledger', 'x.jsonl', '--mcp', '--limit', 'max_kk=3'])).toEqual({
      code: 2,
      stdout: '',
      stderr: `loretrace: unknown limit "max_kk" in --limit max_kk=3; the limits are ${names}; see 'loretrace serve --help' [usage]\n`,
    });
    const help = await run(['serve', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain(`override a server limit (repeatable), e.g. max_calls=200; names: ${names} (defaults in docs/PROXY.md, "Budgets")`);
  });
});
