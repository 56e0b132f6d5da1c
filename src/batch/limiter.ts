/**
 * The batch's rate limit: requests per minute, tokens per minute, and a pause every request
 * honours (a 429 with `Retry-After` stops the whole pool, not just the run that got it). Counting
 * is `rate-limiter-flexible`'s: in this process (`RateLimiterMemory`) or shared by every worker
 * through Redis (`RateLimiterRedis`), with its FIFO `RateLimiterQueue` for the requests waiting
 * here.
 *
 * Requests are spread over the minute rather than allowed in one burst: the library counts in
 * fixed windows of whole seconds, so `rpm` is split into the shortest whole-second window that
 * holds a whole number of requests (60 rpm → 1 request a second; 45 rpm → 3 every 4 seconds).
 * Tokens are only known once a response has ended: they are counted afterwards against a
 * one-minute window, and a request waits while that window is spent.
 */
import type { Redis } from "ioredis";
import { EddyError } from "../errors.js";
import { abortableSleep as sleep, untilAborted } from "../util/abort.js";
import { importPackage } from "../util/import-package.js";

/** A rate limit shared by the requests of a batch (one process, or every worker through Redis). */
export interface RateLimiter {
  /** Waits until one more request may be sent (request rate, token budget, pause); rejects when `signal` aborts. */
  acquire(signal?: AbortSignal): Promise<void>;
  /** Counts the tokens a response used against the token rate. */
  spend(tokens: number): Promise<void>;
  /** Holds every request until `ms` from now (a 429's `Retry-After`); a shorter pause never cuts a longer one. */
  pause(ms: number): Promise<void>;
}

/** Options of `createRateLimiter`. */
export interface RateLimitOptions {
  /** Requests per minute. @defaultValue no limit */
  rpm?: number;
  /** Tokens (input + output) per minute. @defaultValue no limit */
  tpm?: number;
  /** Share the limit through this Redis connection. @defaultValue in this process only */
  redis?: Redis;
  /** Redis key prefix of the counters (one per batch). @defaultValue "eddy:rate" */
  key?: string;
}

type Lib = typeof import("rate-limiter-flexible");
type Limiter = InstanceType<Lib["RateLimiterMemory"]> | InstanceType<Lib["RateLimiterRedis"]>;

/** The library is loaded on the first request, so importing eddy does not pay for it. */
let lib: Promise<Lib> | undefined;
const loadLib = () => {
  lib ??= importPackage<Lib>("rate-limiter-flexible");
  return lib;
};

/**
 * A rate limiter for a batch's requests. Without `rpm` and `tpm` it only honours pauses.
 *
 * @example
 * ```ts
 * const limiter = createRateLimiter({ rpm: 60, tpm: 200_000 });
 * await limiter.acquire(); // one request may go now
 * ```
 */
export function createRateLimiter(options: RateLimitOptions = {}): RateLimiter {
  const rpm = checkRate(options.rpm, "rpm");
  const tpm = checkRate(options.tpm, "tpm");
  const key = options.key ?? "eddy:rate";
  const pauses = options.redis === undefined ? memoryPauses() : redisPauses(options.redis, `${key}:pause`);
  let parts: Promise<{ requests?: InstanceType<Lib["RateLimiterQueue"]>; tokens?: Limiter }> | undefined;
  const load = () => {
    parts ??= loadLib().then((l) => {
      const make = (points: number, duration: number, name: string): Limiter =>
        options.redis === undefined
          ? new l.RateLimiterMemory({ points, duration, keyPrefix: `${key}:${name}` })
          : new l.RateLimiterRedis({
              storeClient: options.redis,
              points,
              duration,
              keyPrefix: `${key}:${name}`,
            });
      const window = rpm === undefined ? undefined : requestWindow(rpm);
      return {
        ...(window === undefined
          ? {}
          : { requests: new l.RateLimiterQueue(make(window.points, window.seconds, "requests")) }),
        ...(tpm === undefined ? {} : { tokens: make(tpm, 60, "tokens") }),
      };
    });
    return parts;
  };
  return {
    async acquire(signal) {
      await waitOut(pauses, signal);
      if (rpm === undefined && tpm === undefined) return;
      const { requests, tokens } = await load();
      if (tokens !== undefined) await waitForTokens(tokens, tpm as number, signal);
      if (requests !== undefined) await untilAborted(requests.removeTokens(1), signal);
      // A pause may have begun while this request waited its turn.
      await waitOut(pauses, signal);
    },
    async spend(used) {
      if (tpm === undefined || !(used > 0)) return;
      const { tokens } = await load();
      await tokens?.penalty("all", Math.round(used));
    },
    pause: (ms) => pauses.extend(Date.now() + Math.max(0, ms)),
  };
}

/** The shortest whole-second window holding a whole number of requests at `rpm`. */
export function requestWindow(rpm: number): { points: number; seconds: number } {
  const g = gcd(rpm, 60);
  return { points: rpm / g, seconds: 60 / g };
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

function checkRate(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < 1) {
    throw new EddyError("invalid_argument", `${name} must be an integer ≥ 1 (got ${String(value)})`, {
      fault: "user",
    });
  }
  return value;
}

/** Where the pause lives: this process, or a Redis key every worker reads. */
interface PauseStore {
  until(): Promise<number>;
  extend(until: number): Promise<void>;
}

function memoryPauses(): PauseStore {
  let until = 0;
  return {
    until: async () => until,
    extend: async (t) => {
      until = Math.max(until, t);
    },
  };
}

/** The pause as a Redis key holding its end time (ms), which expires with it. */
function redisPauses(redis: Redis, key: string): PauseStore {
  return {
    until: async () => Number((await redis.get(key)) ?? 0),
    async extend(t) {
      const ms = t - Date.now();
      if (ms <= 0) return;
      // Keep the later end when two workers pause at once.
      await redis.eval(
        "local cur = tonumber(redis.call('get', KEYS[1]) or '0') if tonumber(ARGV[1]) > cur then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) end return 1",
        1,
        key,
        String(t),
        String(Math.ceil(ms)),
      );
    },
  };
}

async function waitOut(pauses: PauseStore, signal: AbortSignal | undefined): Promise<void> {
  for (;;) {
    const wait = (await pauses.until()) - Date.now();
    if (wait <= 0) return;
    await sleep(wait, signal);
  }
}

/** Waits while this minute's tokens are spent. */
async function waitForTokens(tokens: Limiter, tpm: number, signal: AbortSignal | undefined): Promise<void> {
  for (;;) {
    const state = await tokens.get("all");
    if (state === null || state.consumedPoints < tpm) return;
    await sleep(Math.max(state.msBeforeNext, 10), signal);
  }
}
