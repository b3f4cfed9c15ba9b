/**
 * Runner-key signing of ledgers (docs/RECEIPTS.md "Authorship"): who wrote a ledger, not only that its
 * records hang together. The hash chain (seed 004) proves that no record was edited, inserted or removed
 * after the next was written — but whoever can write the file can write a whole new, internally consistent
 * chain by hand. A signature by a key only the runner holds closes that gap: the closing record of a
 * ledger written with a signing key carries
 *
 * ```json
 * "signature": { "alg": "ed25519", "key_id": "3f1c…(16 hex)", "public_key": "<base64url, 32 bytes>", "sig": "<base64url, 64 bytes>" }
 * ```
 *
 * - `sig` is Ed25519 (RFC 8032, node:crypto; deterministic: same key and record → same bytes) over the
 *   UTF-8 of the RFC 8785 form of the closing record **without `signature` and `record_hash`** — that form
 *   includes `prev_hash`, so the signature covers the whole chain before it.
 * - The signature is **inside** `record_hash`: the record is signed first, then hashed with the signature
 *   in it (`record_hash = SHA-256(prev_hash ‖ JCS(record without prev_hash and record_hash))`, as every
 *   record). So a pinned head (a lock's `ledger.head`, `--head`) pins the signer too; a flipped signature
 *   byte breaks the chain (`ledger_record_hash_mismatch`), and re-hashing it leaves a signature that does
 *   not verify (`ledger_signature_invalid`).
 * - `key_id` is the first 16 hex digits of SHA-256 over the raw 32-byte public key; `public_key` the raw
 *   key itself (base64url, RFC 4648 §5, no padding). Trust is decided by the **whole public key**, never
 *   by `key_id` alone: `key_id` only names the key in reports and locks.
 * - Only `SESSION_CLOSED` is signed (a v2 ledger's other records may not carry a signature): the key signs
 *   when the runner closes the ledger, so a ledger cut off or never closed is unsigned.
 *
 * Keys: PEM files — the private key PKCS #8 (`-----BEGIN PRIVATE KEY-----`, file mode 0600), the public key
 * SPKI (`-----BEGIN PUBLIC KEY-----`), both as node:crypto exports them ({@link generateRunnerKey}).
 *
 * Verification ({@link checkLedgerAuthorship}): a signature present is always checked against the public
 * key it carries (a bad one is `ledger_signature_invalid`, an error, with or without trusted keys). With
 * trusted keys (`--trust-key`) the ledger must be signed (`ledger_unsigned`) by one of them
 * (`ledger_untrusted_signer`). Without trusted keys nobody's authorship is checked, and reports say so.
 *
 * What it still does not prove: that the key was not stolen (whoever holds the private key can sign any
 * chain), and who asked (a tool record's `actor` is the packet's responder id, unauthenticated).
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign as edSign, verify as edVerify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { LoretraceError } from '../errors.js';
import type { Finding } from '../errors.js';
import { canonicalJson } from './ledger-record.js';
import type { LedgerSignature, LedgerSigner } from './ledger-record.js';

/** The only signature algorithm: Ed25519 (RFC 8032). */
export const SIGNATURE_ALG = 'ed25519';

/** Hex digits of SHA-256(raw public key) that make a `key_id`. */
export const KEY_ID_HEX_DIGITS = 16;

// The record's `signature` shape and the signer interface live in ledger-record.ts (the record form), so the
// record module does not import this one.
export type { LedgerSignature, LedgerSigner } from './ledger-record.js';

/** A trusted public key (from {@link readTrustedKey}): its id, its raw bytes and where it came from. */
export interface TrustedKey {
  key_id: string;
  /** The raw public key, base64url. */
  public_key: string;
  /** The file it was read from (for messages), or null. */
  source: string | null;
  /**
   * Which source of trust gave it, for reports (src/cli/keys.ts `trustOrigin`): `--trust-key`,
   * `LORETRACE_TRUSTED_KEYS`, `--config <file>`; absent when a library caller built it.
   */
  origin?: string;
}

/** The raw 32 bytes of an Ed25519 public key, base64url (the JWK `x` member, RFC 8037). */
function rawPublicKey(key: KeyObject): string {
  const jwk = key.export({ format: 'jwk' }) as { x?: string };
  if (typeof jwk.x !== 'string') throw new LoretraceError('bad_signing_key', 'the key has no Ed25519 public part', {});
  return jwk.x;
}

/**
 * The `key_id` of a raw public key given as base64url: the first {@link KEY_ID_HEX_DIGITS} hex digits of
 * SHA-256 over its 32 bytes.
 */
export function keyIdOf(publicKeyB64url: string): string {
  return createHash('sha256').update(Buffer.from(publicKeyB64url, 'base64url')).digest('hex').slice(0, KEY_ID_HEX_DIGITS);
}

/** The bytes a signature covers: UTF-8 of the RFC 8785 form of the record without `signature` and `record_hash`. */
export function signedBytes(record: object): Buffer {
  const { signature: _s, record_hash: _r, ...rest } = record as Record<string, unknown>;
  return Buffer.from(canonicalJson(rest), 'utf8');
}

/** A {@link LedgerSigner} over a node:crypto Ed25519 private key. */
function signerOf(privateKey: KeyObject): LedgerSigner {
  const publicKey = rawPublicKey(createPublicKey(privateKey));
  const keyId = keyIdOf(publicKey);
  return {
    key_id: keyId,
    public_key: publicKey,
    sign(body: object): LedgerSignature {
      const sig = edSign(null, signedBytes(body), privateKey).toString('base64url');
      return { alg: SIGNATURE_ALG, key_id: keyId, public_key: publicKey, sig };
    },
  };
}

/** A fresh key pair as PEM text (what `loretrace keygen` writes), with its key id. */
export interface GeneratedRunnerKey {
  /** PKCS #8 PEM of the private key. */
  private_pem: string;
  /** SPKI PEM of the public key. */
  public_pem: string;
  key_id: string;
  /** The raw public key, base64url. */
  public_key: string;
}

/** Generate an Ed25519 key pair (node:crypto `generateKeyPairSync('ed25519')`). */
export function generateRunnerKey(): GeneratedRunnerKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = rawPublicKey(publicKey);
  return {
    private_pem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    public_pem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    key_id: keyIdOf(raw),
    public_key: raw,
  };
}

/** One PEM block of a key file (RFC 7468 §2): its label (`PUBLIC KEY`) and its 1-based inclusive lines. */
interface PemBlock {
  label: string;
  line_start: number;
  /** The `-----END …-----` line, or null when the file ends inside the block. */
  line_end: number | null;
}

/**
 * The PEM blocks of a key file's text and the first non-blank line outside every block (1-based, or null).
 * Lines are split on LF or CRLF; a block runs from its `-----BEGIN <label>-----` line to the next
 * `-----END <label>-----` line.
 */
function pemBlocks(pem: string): { blocks: PemBlock[]; strayLine: number | null } {
  const blocks: PemBlock[] = [];
  let strayLine: number | null = null;
  let open: PemBlock | null = null;
  pem.split(/\r?\n/).forEach((text, i) => {
    const line = i + 1;
    if (open !== null) {
      if (/^-----END [A-Z0-9 ]+-----\s*$/.test(text)) {
        open.line_end = line;
        open = null;
      }
      return;
    }
    const begin = /^-----BEGIN ([A-Z0-9 ]+)-----\s*$/.exec(text);
    if (begin) {
      open = { label: begin[1]!, line_start: line, line_end: null };
      blocks.push(open);
    } else if (text.trim() !== '' && strayLine === null) {
      strayLine = line;
    }
  });
  return { blocks, strayLine };
}

/**
 * Refuse a key file that is not exactly one PEM block: more than one block, or non-blank text before or after
 * it. node:crypto (as OpenSSL) reads the first block and ignores the rest, so a file holding two keys would
 * silently mean its first one, and other tools read such bundles differently; one file holding one key is what
 * `loretrace keygen` writes and what a report naming the file (`signed by trusted key … (file)`) means. A file
 * with no block at all is left to the key parser (it is "not a PEM … key").
 * @param role `trusted` (`--trust-key`, `bad_trust_key`) or `signing` (`--signing-key`, `bad_signing_key`).
 * @throws LoretraceError `bad_trust_key` / `bad_signing_key` (exit 2) naming the file, the block count and lines,
 *   or the line of the stray text.
 */
function requireOnePemBlock(pem: string, file: string, role: 'trusted' | 'signing'): void {
  const { blocks, strayLine } = pemBlocks(pem);
  const [code, option, kind] = role === 'trusted' ? ['bad_trust_key', '--trust-key', 'public'] as const : ['bad_signing_key', '--signing-key', 'private'] as const;
  const expected = `exactly one PEM ${kind} key block and nothing else in the file`;
  const lines = (b: PemBlock) => `lines ${b.line_start}-${b.line_end ?? 'end of file'}`;
  if (blocks.length > 1) {
    const label = blocks.every((b) => b.label === blocks[0]!.label) ? `${blocks[0]!.label.toLowerCase()}s` : 'PEM blocks';
    const where = blocks.map((b) => (label === 'PEM blocks' ? `${b.label} ${lines(b)}` : lines(b))).join(', ');
    throw new LoretraceError(code, `${file} holds ${blocks.length} ${label} (${where}); a ${role} key file holds exactly one key — give each key its own file${role === 'trusted' ? ' and its own --trust-key (or trusted_keys entry)' : ''}`, { file, line: blocks[1]!.line_start, expected }, 2);
  }
  if (blocks.length === 1 && strayLine !== null) {
    const side = strayLine < blocks[0]!.line_start ? `before its -----BEGIN ${blocks[0]!.label}----- line` : `after its -----END ${blocks[0]!.label}----- line`;
    throw new LoretraceError(code, `${file} line ${strayLine}: text ${side}; ${option} takes a file holding one PEM ${kind} key and nothing else (as loretrace keygen writes it)`, { file, line: strayLine, expected }, 2);
  }
}

/**
 * The signer of a private key file's text (PKCS #8 PEM of an Ed25519 key, as `loretrace keygen` writes).
 * @param file the key file, named in messages (its text is never put in one).
 * @throws LoretraceError `bad_signing_key` (exit 2) when the text is not a private key PEM, or the key is
 *   not Ed25519 (a public key given where the private one belongs is named as such), or the file holds more
 *   than one PEM block or text outside it ({@link requireOnePemBlock}: which key would sign is ambiguous).
 */
export function readSigningKey(pem: string, file: string): LedgerSigner {
  requireOnePemBlock(pem, file, 'signing');
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    const isPublic = /-----BEGIN PUBLIC KEY-----/.test(pem);
    throw new LoretraceError('bad_signing_key', `${file} is ${isPublic ? 'a public key' : 'not a PEM private key'}; --signing-key takes the private key loretrace keygen wrote (-----BEGIN PRIVATE KEY-----, Ed25519)`, { file, expected: 'a PKCS #8 PEM Ed25519 private key' }, 2);
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new LoretraceError('bad_signing_key', `${file} is a ${key.asymmetricKeyType ?? 'non-asymmetric'} private key; loretrace signs ledgers with Ed25519 only (loretrace keygen)`, { file, expected: 'an Ed25519 private key' }, 2);
  }
  return signerOf(key);
}

/**
 * A trusted key from a public key file's text (SPKI PEM, as `loretrace keygen` writes beside the private key).
 * A private key is refused: a trust list is handed around, a private key must not be.
 * @throws LoretraceError `bad_trust_key` (exit 2) for a private key (anywhere in the file), text that is not
 *   a PEM public key, a key that is not Ed25519, or a file holding more than one PEM block (`holds 2 public
 *   keys`) or text outside its one block ({@link requireOnePemBlock}).
 */
export function readTrustedKey(pem: string, file: string): TrustedKey {
  if (/-----BEGIN (?:[A-Z0-9 ]+ )?PRIVATE KEY-----/.test(pem)) {
    throw new LoretraceError('bad_trust_key', `${file} is a private key; --trust-key takes the public key (the .pub.pem loretrace keygen wrote beside it) — keep the private key with the runner`, { file, expected: 'a PEM public key (-----BEGIN PUBLIC KEY-----)' }, 2);
  }
  requireOnePemBlock(pem, file, 'trusted');
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch {
    throw new LoretraceError('bad_trust_key', `${file} is not a PEM public key; --trust-key takes the .pub.pem loretrace keygen wrote`, { file, expected: 'a PEM public key (-----BEGIN PUBLIC KEY-----)' }, 2);
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new LoretraceError('bad_trust_key', `${file} is a ${key.asymmetricKeyType ?? 'non-asymmetric'} public key; loretrace ledgers are signed with Ed25519 only`, { file, expected: 'an Ed25519 public key' }, 2);
  }
  const raw = rawPublicKey(key);
  return { key_id: keyIdOf(raw), public_key: raw, source: file };
}

/**
 * Authorship of a ledger, as checked:
 * - `trusted` — signed, the signature verifies, and its public key is one of the trusted keys;
 * - `not_checked` — no trusted keys were given: the signature (if any) verified, but nobody's authorship was checked;
 * - `unsigned` — trusted keys were given and the closing record carries no signature (or there is none);
 * - `untrusted_signer` — the signature verifies, but its public key is none of the trusted keys;
 * - `signature_invalid` — the signature does not verify against the public key it carries, or its
 *   `key_id` is not that key's id (checked with or without trusted keys).
 */
export type AuthorshipStatus = 'trusted' | 'not_checked' | 'unsigned' | 'untrusted_signer' | 'signature_invalid';

/** What {@link checkLedgerAuthorship} returns (`LedgerVerifyReport.authorship`). */
export interface LedgerAuthorship {
  /** True when trusted keys were given. */
  checked: boolean;
  status: AuthorshipStatus;
  /** The signature's `key_id` as the record states it (null when unsigned). */
  key_id: string | null;
  /** One sentence: what was found (for reports). */
  detail: string;
}

/** Finding codes of authorship, each an error that fails the ledger. */
export const AUTHORSHIP_CODES = ['ledger_unsigned', 'ledger_untrusted_signer', 'ledger_signature_invalid'] as const;
/** One authorship finding code. */
export type AuthorshipCode = (typeof AUTHORSHIP_CODES)[number];

/** The finding code of a failed {@link AuthorshipStatus}, or null for `trusted` / `not_checked`. */
export function authorshipCode(status: AuthorshipStatus): AuthorshipCode | null {
  return status === 'unsigned' ? 'ledger_unsigned' : status === 'untrusted_signer' ? 'ledger_untrusted_signer' : status === 'signature_invalid' ? 'ledger_signature_invalid' : null;
}

/** The sentence every report prints when no trusted key was given. */
export const AUTHORSHIP_NOT_CHECKED = 'authorship not checked (no --trust-key)';

/**
 * The verdict of a verification that may rest on a ledger (`verifyTrace`, `verifyLock`, `verifyLedger`), the
 * field a caller reads before anything else:
 * - `verified` — every check passed and every ledger it rests on is signed by a trusted key (or it rests on
 *   no ledger at all — except a trace: `verifyTrace` is `verified` only when a ledger backs an entry);
 * - `integrity_only` — every check passed, but no trusted key was given, so the authorship of a ledger it
 *   rests on was not checked: the chain and hashes are intact, and anyone who can write the file can write
 *   such a ledger (seed 001: "a receipt that anyone could write by hand is worthless"); for `verifyTrace` also
 *   a trace none of whose entries is ledger-backed, whatever keys were given;
 * - `failed` — a check failed.
 * Only `verified` is a success; `integrity_only` is one only when the caller opts in (`--integrity-only`).
 */
export type VerificationVerdict = 'verified' | 'integrity_only' | 'failed';

/**
 * The {@link VerificationVerdict} of a check whose every other test passed (`integrityOk`) and whose ledger
 * authorship was left unchecked (`authorshipUnchecked`: a ledger is relied on and no trusted key was given).
 */
export function verificationVerdict(integrityOk: boolean, authorshipUnchecked: boolean): VerificationVerdict {
  return !integrityOk ? 'failed' : authorshipUnchecked ? 'integrity_only' : 'verified';
}

/** Does `signature` verify over `record`? Returns why not, or null. Never throws. */
function signatureProblem(record: Record<string, unknown>, signature: LedgerSignature): string | null {
  const raw = Buffer.from(signature.public_key, 'base64url');
  if (raw.length !== 32 || raw.toString('base64url') !== signature.public_key) return `its public_key is not 32 bytes of base64url`;
  if (keyIdOf(signature.public_key) !== signature.key_id) return `its key_id ${signature.key_id} is not the id of its public_key (${keyIdOf(signature.public_key)})`;
  const sig = Buffer.from(signature.sig, 'base64url');
  if (sig.length !== 64 || sig.toString('base64url') !== signature.sig) return 'its sig is not 64 bytes of base64url';
  let ok = false;
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: signature.public_key }, format: 'jwk' });
    ok = edVerify(null, signedBytes(record), key, sig);
  } catch {
    ok = false;
  }
  return ok ? null : 'the Ed25519 signature does not verify over the record (without signature and record_hash) with the public key it carries';
}

/**
 * Check who wrote a ledger whose chain verified: `closing` is its last record when that closes the session
 * (`SESSION_CLOSED`), else null (an unclosed or v1 ledger, which is never signed). `trusted` empty means
 * authorship is not checked. Returns the verdict and, when it fails, one error finding (codes
 * {@link AUTHORSHIP_CODES}) placed at `at` (the closing record's line). Never throws.
 */
export function checkLedgerAuthorship(closing: Record<string, unknown> | null, trusted: readonly TrustedKey[], at: Pick<Finding, 'path' | 'line'>): { authorship: LedgerAuthorship; finding: Finding | null } {
  const checked = trusted.length > 0;
  const signature = closing?.['signature'] as LedgerSignature | undefined;
  const result = (status: AuthorshipStatus, detail: string): { authorship: LedgerAuthorship; finding: Finding | null } => {
    const code = authorshipCode(status);
    return {
      authorship: { checked, status, key_id: signature?.key_id ?? null, detail },
      finding: code === null ? null : { code, severity: 'error', message: detail, ...at, pointer: '/signature' },
    };
  };
  const trustedIds = trusted.map((k) => k.key_id).join(', ');
  const from = trustOrigin(trusted);
  if (signature === undefined) {
    const why = closing === null ? 'the ledger has no SESSION_CLOSED record (a runner signs when it closes the ledger)' : 'its SESSION_CLOSED record carries no signature (the runner ran without --signing-key)';
    return checked
      ? result('unsigned', `the ledger is unsigned: ${why}; ${from} ${trustedIds} asks for a ledger signed by one of those keys`)
      : result('not_checked', `${AUTHORSHIP_NOT_CHECKED}; the ledger is unsigned`);
  }
  const problem = signatureProblem(closing!, signature);
  if (problem !== null) return result('signature_invalid', `the signature of the SESSION_CLOSED record is invalid: ${problem}; the record was edited after signing, or the signature was made for another chain`);
  if (!checked) return result('not_checked', `${AUTHORSHIP_NOT_CHECKED}; signed by key ${signature.key_id}, signature valid`);
  const match = trusted.find((k) => k.public_key === signature.public_key);
  if (!match) return result('untrusted_signer', `the ledger is signed by key ${signature.key_id}, which is none of the trusted keys (${trustedIds}); its signature is valid, but a key anyone can make proves nothing`);
  // A key given with --trust-key is named by its file, which the command line shows; any other source is named too.
  const named = [match.source, match.origin !== undefined && match.origin !== '--trust-key' ? `from ${match.origin}` : null].filter((x): x is string => x !== null);
  return result('trusted', `signed by trusted key ${signature.key_id}${named.length ? ` (${named.join(', ')})` : ''}`);
}

/**
 * Where a list of trusted keys came from, for reports: the distinct {@link TrustedKey.origin}s in order —
 * `--trust-key`, `LORETRACE_TRUSTED_KEYS`, `--config /abs/trust.json` (src/cli/keys.ts `trustedKeysFromOptions`
 * sets them) — joined by `, `; `trusted keys` for keys without one (a library caller's). Never claims a flag that
 * was not given.
 */
export function trustOrigin(keys: readonly TrustedKey[]): string {
  return [...new Set(keys.map((k) => k.origin ?? 'trusted keys'))].join(', ');
}
