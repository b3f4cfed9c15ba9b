import { it } from 'vitest';
import { FIXTURE_VAULT } from './helpers/shared.js';
import { listVault, parseVault, resolveVault } from './helpers/fixture-notes.js';
it('scratch', () => {
  const paths = listVault(FIXTURE_VAULT).filter(p => !p.startsWith('World/') && !p.startsWith('Coverage/'));
  const v = parseVault(FIXTURE_VAULT, paths);
  const want = (process.env.NOTE ?? '').split(',');
  for (const [p, r] of v.parsed) if (want.includes(p)) console.log(p, JSON.stringify({ ...r, chunks: r.chunks.map(c => ({ ...c, text: c.text.slice(0, 60), hash: undefined })) }, null, 1));
  const res = resolveVault(v);
  if (process.env.RES) { for (const l of res.links) console.log(l.source_path, l.line, l.column, l.syntax, l.position, l.raw, JSON.stringify(l.resolution)); console.log(res.findings.map(f => f.message).join('\n')); }
});
