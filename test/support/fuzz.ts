/**
 * Shared pieces of the fuzz suites (test/fuzz-*.test.ts): how many runs, which seed, and the
 * arbitraries of hostile JSON. `npm test` runs the short form with a fixed seed, so CI's verdict
 * does not change from one run to the next; `npm run fuzz` is the long form, `EDDY_FUZZ_RUNS=N`
 * cases per property from a fresh random seed each time (fast-check prints the seed of a failure);
 * `EDDY_FUZZ_SEED=S` replays that seed.
 */
import fc from "fast-check";
import { EddyError } from "../../src/errors.js";

/** The seed of the short form (`npm test`). */
const SHORT_FORM_SEED = 20_261_127;

/** fast-check parameters for a property whose short form makes `short` runs. */
export function fuzzParams(short: number): fc.Parameters<unknown> {
  const runs = Number(process.env.EDDY_FUZZ_RUNS);
  const seed = Number(process.env.EDDY_FUZZ_SEED);
  const long = Number.isInteger(runs) && runs > 0;
  return {
    numRuns: long ? runs : short,
    ...(Number.isInteger(seed) ? { seed } : long ? {} : { seed: SHORT_FORM_SEED }),
  };
}

/** A test timeout that grows with `EDDY_FUZZ_RUNS` (the short form's own is `shortMs`). */
export function fuzzTimeout(short: number, shortMs: number): number {
  const runs = Number(process.env.EDDY_FUZZ_RUNS);
  return Number.isInteger(runs) && runs > short ? Math.ceil((shortMs * runs) / short) : shortMs;
}

/** Strings that break naive code: empty, whitespace, controls, escapes, unicode, JSON-ish, long. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.constantFrom(
    "",
    " ",
    "\n",
    "\u0000",
    "\u001b[2J",
    "\u001b]0;title\u0007",
    "__proto__",
    "constructor",
    "toString",
    "../../etc/passwd",
    "😀",
    "\ud800",
    "{",
    "null",
    "http://",
    "http://[::1",
    "https://user:pw@example.com/v1",
    "x".repeat(5000),
  ),
  fc.string({ unit: "grapheme", maxLength: 10 }),
);

/** Any JSON value, with the nasty strings in it. */
export const nastyJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom(null, true, false, 0, -1, 1, 1.5, 2 ** 53, -(2 ** 31), 1e308),
    nastyString,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(nastyString, tie("value"), { maxKeys: 4 }),
  ),
})).value;

/** An object whose keys come from `keys` (each maybe present), values from `values` or any JSON. */
export function objectWith(
  keys: Record<string, fc.Arbitrary<unknown>>,
  extra = true,
): fc.Arbitrary<Record<string, unknown>> {
  const fields = Object.fromEntries(
    Object.entries(keys).map(([k, v]) => [
      k,
      fc.oneof({ weight: 3, arbitrary: v }, { weight: 1, arbitrary: nastyJson }),
    ]),
  );
  const base = fc.record(fields, { requiredKeys: [] });
  if (!extra) return base;
  return fc
    .tuple(base, fc.dictionary(nastyString, nastyJson, { maxKeys: 2 }))
    .map(([known, more]) => ({ ...more, ...known }));
}

/** A JSON text that may have been cut, padded or mangled on the way. */
export function mangled(text: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: text },
    { weight: 1, arbitrary: fc.tuple(text, fc.nat()).map(([t, n]) => t.slice(0, n % (t.length + 1))) },
    { weight: 1, arbitrary: fc.tuple(text, nastyString).map(([t, s]) => t + s) },
    { weight: 1, arbitrary: nastyString },
  );
}

/**
 * Whether `error` is what hostile input may produce: an `EddyError` (or one of its subclasses)
 * whose message is one line. A TypeError, a RangeError or an "internal error" is not.
 */
export function isClearError(error: unknown): boolean {
  return (
    EddyError.isInstance(error) &&
    !error.message.includes("\n") &&
    error.message !== "" &&
    !/internal error/i.test(error.message)
  );
}
