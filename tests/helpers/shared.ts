/**
 * Locations of the read-only shared data (`../shared` next to the repo). Tests that need it use
 * `describe.skipIf(!hasShared)(...)`; when it is absent, {@link sharedNotice} is printed once so the
 * skip is visible, never silent.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SHARED = process.env.LORETRACE_SHARED ?? resolve(REPO, '..', 'shared');
export const AETHERIA = join(SHARED, 'lore', 'AetheriaLore');
export const GHOSTLIGHT = join(SHARED, 'ghostlight');
export const FIXTURES = join(REPO, 'lore-fixtures');
export const FIXTURE_VAULT = join(FIXTURES, 'FixtureLore');
export const hasShared = existsSync(AETHERIA) && existsSync(GHOSTLIGHT);
export const sharedNotice = `shared data not found at ${SHARED}: real-vault tests are skipped (set LORETRACE_SHARED to point at it)`;
if (!hasShared) console.warn(`[loretrace tests] ${sharedNotice}`);
