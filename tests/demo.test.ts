/**
 * `npm run demo` ends with a plain-language verdict — what was built, from which lore, and that every cited
 * line was checked — before the details. Runs the script with the built CLI (npm test builds first).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from './helpers/shared.js';

describe('npm run demo', () => {
  it('ends with the verdict (built, from, checked, signed by its throwaway runner key) and then the details', () => {
    const r = spawnSync(process.execPath, [join(REPO, 'scripts', 'demo.mjs')], { cwd: REPO, encoding: 'utf8' });
    expect(r.status).toBe(0);
    const tail = r.stdout.slice(r.stdout.indexOf('\nVerdict\n'));
    expect(tail).toBe(
      '\nVerdict\n' +
        '  Built:   a retrieval-augmented responder packet for mara_voss (.demo-out/packet.coordinator.json), with 3 lore excerpts added to the draft\'s 1 excerpt.\n' +
        // Compact excerpts: Meridian Compact's last chunk gives line 25, which names no hidden lore (nothing
        // withheld); the default budget (4 excerpts, 600 characters for this draft) cuts Kestrel Route Accord.
        // The walk's relevance stop leaves out Harbor Neutrality, which matches none of the scene's queries.
        // Lines: Brinefall Blackout 11-12, Meridian Compact 25, Quiet Hands 7.
        '  From:    3 notes of the FixtureLore vault (lore-fixtures/FixtureLore, snapshot 3e69bbc3a488), chosen by the packet\'s traversal policy; the excerpt budget (4 excerpts, 600 characters) left 1 more excerpt out.\n' +
        '  Checked: every cited line — 4 lines in 3 trace entries — was read again from the vault and matches it exactly, and each entry is backed by the ledger record of the lookup that served it (.demo-out/packet.coordinator.ledger.jsonl).\n' +
        '  Signed:  the ledger is signed by the runner key whose public half is .demo-out/runner.pub.pem (a throwaway key made by loretrace keygen for this demo), so whoever holds its private key closed it; a signature names the signer, it does not show that nothing was edited before signing.\n' +
        'Details\n' +
        // Every entry of .demo-out/, sorted: the two locks retrieve writes beside its packets and the index folder too.
        '  files written: .demo-out/index/, .demo-out/lore_access.json, .demo-out/packet.coordinator.json, .demo-out/packet.coordinator.ledger.jsonl, .demo-out/packet.coordinator.lock.json, .demo-out/packet.research.json, .demo-out/packet.research.lock.json, .demo-out/runner.key.pem, .demo-out/runner.pub.pem\n' +
        '  verify-trace: verified 3, text_mismatch 0, out_of_range 0, chunk_mismatch 0, missing_file 0, policy_violation 0, drifted 0, unverifiable 0, unbacked 0, ledger_mismatch 0, ledger_broken 0, ledger_untrusted 0, seed_not_consulted 0, claimed_not_read 0, ledger_not_closed 0, ledger_unsigned 0, ledger_untrusted_signer 0, ledger_signature_invalid 0\n',
    );
  });
});
