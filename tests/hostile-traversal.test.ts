// Hostile packets / projected contexts / input files for `traverse` (breaker regressions): each case
// once ended in "internal error … (this is a bug)" or hung on a non-regular file.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { packetQueries, requirementQueries } from '../src/traversal/index.js';
import { isLoretraceError } from '../src/errors.js';
import { FIXTURES } from './helpers/shared.js';

const dir = mkdtempSync(join(tmpdir(), 'loretrace-hostile-traversal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function thrown(fn: () => unknown): { code: string; message: string; pointer: unknown } {
  try {
    fn();
  } catch (e) {
    if (isLoretraceError(e)) return { code: e.code, message: e.message, pointer: e.details.pointer };
    throw e;
  }
  throw new Error('did not throw');
}

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env: { LORETRACE_INDEX_DIR: join(dir, 'idx') }, cwd: FIXTURES, isTTY: false });
  return { code, out, err };
}

function file(name: string, text: string | Buffer): string {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
}

describe('requirementQueries', () => {
  it('refuses a malformed projected context with the pointer instead of a TypeError', () => {
    expect(thrown(() => requirementQueries(null as never))).toEqual({ code: 'bad_input', message: 'projected context / must be a JSON object (got null)', pointer: '/' });
    expect(thrown(() => requirementQueries({ context: { runtime_retrieval_requirements: 'abc' } } as never))).toEqual({
      code: 'bad_input',
      message: 'projected context /context/runtime_retrieval_requirements must be a list of requirement objects (got "abc")',
      pointer: '/context/runtime_retrieval_requirements',
    });
    expect(thrown(() => requirementQueries({ context: { runtime_retrieval_requirements: [null] } } as never)).pointer).toBe('/context/runtime_retrieval_requirements/0');
    expect(thrown(() => requirementQueries({ context: { runtime_retrieval_requirements: [{ trigger: 't', compact_fact: {} }] } } as never))).toEqual({
      code: 'bad_input',
      message: 'projected context /context/runtime_retrieval_requirements/0/compact_fact must be a string (got object)',
      pointer: '/context/runtime_retrieval_requirements/0/compact_fact',
    });
  });

  it('gives no queries for a context without requirements, and no "undefined" for a missing requirement_id', () => {
    expect(requirementQueries({})).toEqual([]);
    expect(requirementQueries({ context: { runtime_retrieval_requirements: [{ trigger: 't', compact_fact: 'f' }] } } as never)).toEqual([{ text: 't: f', used_for: 'runtime_retrieval_requirements[0]' }]);
  });
});

describe('packetQueries', () => {
  it('refuses malformed packet fields with the pointer instead of a TypeError', () => {
    expect(thrown(() => packetQueries({ visible_context: 'x' } as never))).toEqual({ code: 'bad_input', message: 'packet /visible_context must be an object (got "x")', pointer: '/visible_context' });
    expect(thrown(() => packetQueries({ visible_context: { observed_event: { observable_action: 5 } } } as never)).pointer).toBe('/visible_context/observed_event/observable_action');
    expect(thrown(() => packetQueries({ visible_context: { source_excerpts: 'abc' } } as never)).pointer).toBe('/visible_context/source_excerpts');
    expect(thrown(() => packetQueries({ visible_context: { source_excerpts: [null] } } as never))).toEqual({ code: 'bad_input', message: 'packet /visible_context/source_excerpts/0 must be an excerpt object (got null)', pointer: '/visible_context/source_excerpts/0' });
  });
});

describe('loretrace traverse with hostile input files (CLI)', () => {
  const POLICY = 'policies/world-blackout.policy.json';

  it('reads a BOM-prefixed projected context', async () => {
    const pc = file('bom.pc.json', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ context: { runtime_retrieval_requirements: [{ requirement_id: 'r', trigger: 't', compact_fact: 'sanctuary capacity' }] } }))]));
    const r = await cli(['traverse', '--lore', 'FixtureLore', '--policy', POLICY, '--projected-context', pc, '--json']);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.out) as { stats: { queries: string[] } }).stats.queries).toEqual(['t: sanctuary capacity']);
  });

  it('exits 2 with line and column for a projected context that is not JSON', async () => {
    const pc = file('bad.pc.json', '{"context": ');
    expect(await cli(['traverse', '--lore', 'FixtureLore', '--policy', POLICY, '--projected-context', pc])).toEqual({ code: 2, out: '', err: `loretrace: ${pc} is not JSON: unexpected end of input at line 1, column 13 [bad_json]\n` });
  });

  it('exits 1 naming file and pointer for a projected context of the wrong shape', async () => {
    const pc = file('null.pc.json', 'null');
    expect(await cli(['traverse', '--lore', 'FixtureLore', '--policy', POLICY, '--projected-context', pc])).toEqual({ code: 1, out: '', err: `loretrace: projected context / must be a JSON object (got null) (${pc}, pointer /) [bad_input]\n` });
  });

  it('exits 1 naming file and pointer for a packet whose allowed_scope is a string', async () => {
    const policy = { max_link_depth: 1, allowed_prefixes: ['FixtureLore:World/'], required_seed_refs: [], follow_link_classes: [], stop_conditions: [] };
    const pk = file('scope.packet.json', JSON.stringify({ lore_access: { traversal_policy: policy, allowed_scope: 'FixtureLore:World/' } }));
    expect(await cli(['traverse', '--lore', 'FixtureLore', '--packet', pk])).toEqual({ code: 1, out: '', err: `loretrace: packet /lore_access/allowed_scope must be a list of strings (got "FixtureLore:World/") (${pk}, pointer /lore_access/allowed_scope) [bad_policy]\n` });
  });

  it('exits 2 instead of reading /dev/zero forever', async () => {
    expect(await cli(['traverse', '--lore', 'FixtureLore', '--policy', '/dev/zero'])).toEqual({ code: 2, out: '', err: 'loretrace: cannot read /dev/zero: not a regular file [file_not_found]\n' });
  });

  it.skipIf(process.platform === 'win32')('exits 2 instead of blocking on a FIFO', async () => {
    const fifo = join(dir, 'fifo.policy.json');
    execFileSync('mkfifo', [fifo]);
    expect(await cli(['traverse', '--lore', 'FixtureLore', '--policy', fifo])).toEqual({ code: 2, out: '', err: `loretrace: cannot read ${fifo}: not a regular file [file_not_found]\n` });
  });
});

describe('loretrace validate with non-regular files (CLI)', () => {
  it('exits 2 instead of reading /dev/zero forever', async () => {
    expect(await cli(['validate', 'packet', '/dev/zero'])).toEqual({ code: 2, out: '', err: 'loretrace: cannot read /dev/zero: not a regular file [file_not_found]\n' });
  });
});
