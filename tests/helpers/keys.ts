/**
 * Deterministic Ed25519 runner keys for tests: each from a fixed 32-byte seed (RFC 8032 private key), so key
 * ids, signatures and signed ledgers are the same on every run. Written as the PEM files `loretrace keygen`
 * writes (PKCS #8 private key, mode 0600; SPKI public key). Test keys only: their seeds are in this file.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readSigningKey, readTrustedKey } from '../../src/receipts/signing.js';
import type { LedgerSigner, TrustedKey } from '../../src/receipts/signing.js';

/** DER prefix of a PKCS #8 Ed25519 private key (RFC 8410 §7) before its 32-byte seed. */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** A test key: its PEM texts, signer and trusted-key form. */
export interface TestKey {
  privatePem: string;
  publicPem: string;
  signer: LedgerSigner;
  trusted: TrustedKey;
}

/** The test key of seed byte `n` (the seed is 32 bytes of `n`). */
export function testKey(n: number): TestKey {
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, Buffer.alloc(32, n)]), format: 'der', type: 'pkcs8' });
  const privatePem = key.export({ format: 'pem', type: 'pkcs8' }).toString();
  const publicPem = createPublicKey(key).export({ format: 'pem', type: 'spki' }).toString();
  return { privatePem, publicPem, signer: readSigningKey(privatePem, `key${n}.key.pem`), trusted: readTrustedKey(publicPem, `key${n}.pub.pem`) };
}

/** Write test key `n` into `dir` as `key<n>.key.pem` (mode 0600) and `key<n>.pub.pem`; returns both paths. */
export function writeTestKey(dir: string, n: number): { privatePath: string; publicPath: string; key: TestKey } {
  const key = testKey(n);
  const privatePath = join(dir, `key${n}.key.pem`);
  const publicPath = join(dir, `key${n}.pub.pem`);
  writeFileSync(privatePath, key.privatePem, { mode: 0o600 });
  writeFileSync(publicPath, key.publicPem);
  return { privatePath, publicPath, key };
}
