/**
 * Deterministic ids. Each mock server instance numbers its ids per kind from 1, so two runs of the
 * same test (and a recorded tape) see the same `resp_mock_0001`, `call_mock_0002`, … No clock, no
 * randomness.
 */

/** The id kinds the mock hands out, as they appear before the first underscore. */
export type IdKind = "resp" | "msg" | "fc" | "call" | "rs" | "req" | "chatcmpl" | "cmp";

/** Hands out ids such as `resp_mock_0001`; one counter per kind. */
export interface IdGenerator {
  next(kind: IdKind): string;
}

/** Creates an id generator; `prefix` is the middle part (`mock` → `resp_mock_0001`). */
export function createIdGenerator(prefix: string): IdGenerator {
  const counters = new Map<IdKind, number>();
  return {
    next(kind) {
      const n = (counters.get(kind) ?? 0) + 1;
      counters.set(kind, n);
      return `${kind}_${prefix}_${String(n).padStart(4, "0")}`;
    },
  };
}
