/**
 * Password hashing: scrypt (node:crypto) with a random 16-byte salt per password and the
 * cost stored beside the hash, so it can be raised later without breaking old hashes.
 * Format: `scrypt$N$r$p$<salt b64>$<hash b64>`. Verification is constant-time.
 */
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const scrypt = (pw: string, salt: Buffer, len: number, o: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) => scryptCb(pw, salt, len, o, (err, key) => (err ? reject(err) : resolve(key))));

/** 2^15 × 8 × 1: ~32 MiB and ~50-100 ms per hash on a small machine. */
const COST = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LEN = 32;
export const MIN_PASSWORD = 10;
export const MAX_PASSWORD = 200;

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password.normalize('NFC'), salt, KEY_LEN, { ...COST, maxmem: 64 * 1024 * 1024 });
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64'), key.toString('base64')].join('$');
}

/** A hash of a password nobody has: used for unknown names, so a miss costs as much as a hit. */
let decoy: Promise<string> | null = null;
export const decoyHash = () => (decoy ??= hashPassword(randomBytes(24).toString('base64')));

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [alg, n, r, p, saltB64, keyB64] = stored.split('$');
  if (alg !== 'scrypt' || !saltB64 || !keyB64) return false;
  const expected = Buffer.from(keyB64, 'base64');
  const key = await scrypt(password.normalize('NFC'), Buffer.from(saltB64, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: 64 * 1024 * 1024,
  });
  return key.length === expected.length && timingSafeEqual(key, expected);
}
