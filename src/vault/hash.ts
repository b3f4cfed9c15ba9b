/**
 * The one content hash of loretrace: lower-case hex SHA-256, over a file's bytes (manifest entries,
 * `snapshot_id`, stale-file checks) or a UTF-8 string (canonical JSON bodies). A leaf module, so every
 * stage can import it downward.
 */
import { createHash } from 'node:crypto';

/** Lower-case hex SHA-256 of bytes or of a string's UTF-8 encoding (64 characters). */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}
