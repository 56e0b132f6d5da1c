/** Comparing a secret a client sent with the one expected, in time that does not depend on where they differ. */
import { createHash, timingSafeEqual } from "node:crypto";

/**
 * Whether `given` is `expected`, compared as SHA-256 digests with `timingSafeEqual`: the time taken
 * says nothing of how much of a guess was right, nor of the expected length (`===` stops at the
 * first difference). Used for every bearer token a server of eddy's checks.
 */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}
