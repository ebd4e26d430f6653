import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 200;

/** scrypt's cost: N = 2^14, r = 8, p = 1 (16 MB, tens of milliseconds). Recorded in each hash, so it can be raised later. */
const COST = { N: 16384, r: 8, p: 1 };
const KEY_BYTES = 32;
const SALT_BYTES = 16;
const FORMAT = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

/**
 * node:crypto's scrypt ends a password at its first NUL (measured: "x\u0000y" and "x" derive the same key), so
 * a password holding one is refused when set and matches nothing when checked.
 */
export const NUL = '\u0000';

function derive(password: string, salt: Buffer, cost: { N: number; r: number; p: number }, bytes: number): Promise<Buffer> {
  // scrypt needs 128·N·r bytes; allow twice that so recorded costs a little above today's still verify.
  const options: ScryptOptions = { ...cost, maxmem: 256 * cost.N * cost.r };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, bytes, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** A hash of a random password, made once per process, with today's cost. */
let dummyHash: Promise<string> | undefined;

/** Slow salted password hashes, `scrypt$N$r$p$salt$hash` (salt and hash in base64url). */
export class PasswordHasher {
  async hash(password: string): Promise<string> {
    if (password.includes(NUL)) throw new Error('a password holding NUL would be hashed as its part before it');
    const salt = randomBytes(SALT_BYTES);
    const key = await derive(password, salt, COST, KEY_BYTES);
    return `scrypt$${COST.N}$${COST.r}$${COST.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
  }

  /** Whether the password matches the stored hash; a hash in an unknown format matches nothing. */
  async verify(password: string, stored: string): Promise<boolean> {
    const parts = FORMAT.exec(stored);
    if (!parts) return false;
    const [, n, r, p, salt, expected] = parts as unknown as [string, string, string, string, string, string];
    const want = Buffer.from(expected, 'base64url');
    const key = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) }, want.length);
    // Derived all the same: a refused password costs what a wrong one does.
    return timingSafeEqual(key, want) && !password.includes(NUL);
  }

  /**
   * The work of a verification that cannot succeed: answering an unknown email
   * as fast as a wrong password would tell which emails are members.
   */
  async verifyDummy(password: string): Promise<false> {
    dummyHash ??= this.hash(randomBytes(18).toString('base64url'));
    await this.verify(password, await dummyHash);
    return false;
  }
}
