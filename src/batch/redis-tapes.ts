/**
 * Tapes in Redis, for workers on machines that share no disk: each run's tape is a Redis stream
 * (`PREFIX:tape:ID:N`, one entry per line: field `l`), and a hash (`PREFIX:tapes`) says which
 * stream is each task's tape. A fresh run points the hash at its stream at once; a resumed run
 * points it there once it has reproduced the old tape's reusable frames, and the old stream goes.
 * Frames are sent in order on one connection without waiting for each; `flush()` (awaited before
 * each tool call runs) and `close()` wait for them and fail when one was lost. Each line's entry id is its place in the tape, so a line sent twice
 * (the client repeats the commands Redis had not answered when the connection dropped) is stored
 * once.
 */
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { EddyError } from "../errors.js";
import { parseTape } from "../replay/tape.js";
import { untilAborted } from "../util/abort.js";
import { redactSecrets } from "../util/redact.js";
import type { TapeStore, TapeWriter } from "./tape-store.js";

/** Points the task at the new stream and drops the stream it had (atomically). */
const SWAP = `local old = redis.call('hget', KEYS[1], ARGV[1])
redis.call('hset', KEYS[1], ARGV[1], ARGV[2])
if old and old ~= ARGV[2] and string.sub(old, 1, string.len(ARGV[3])) == ARGV[3] then redis.call('del', old) end
return 1`;

/**
 * The stream a task's pointer names, when it is one of this batch's tapes (`PREFIX:tape:UUID`).
 * The hash is in Redis, which another client may write: a pointer naming any other key is not
 * read (a wrong-type key made the coordinator fail for good) nor deleted.
 */
function tapeKeyOf(prefix: string, pointer: string): string | undefined {
  const head = `${prefix}:tape:`;
  return pointer.startsWith(head) && /^[0-9a-f-]{36}$/.test(pointer.slice(head.length)) ? pointer : undefined;
}

/** The tapes of a batch under `prefix` (e.g. `eddy:batch:ID`); `secrets` never reach them. */
export function redisTapeStore(redis: Redis, prefix: string, secrets: readonly string[] = []): TapeStore {
  const pointers = `${prefix}:tapes`;
  return {
    async read(id) {
      const text = await readTapeText(redis, prefix, id);
      return text === undefined || text === "" ? undefined : parseTape(text, `the tape of task ${id}`);
    },
    open(id, header, replace) {
      const key = `${prefix}:tape:${randomUUID()}`;
      const pending = new Set<Promise<unknown>>();
      let lost: unknown;
      const send = (promise: Promise<unknown>) => {
        const tracked = promise.catch((err: unknown) => {
          lost ??= err;
        });
        pending.add(tracked);
        tracked.finally(() => pending.delete(tracked));
      };
      // Each line has its own entry id (`0-N`, N its place in the tape): a write Redis did but
      // could not answer before a restart is sent again by the client on reconnect, and the second
      // copy is then refused (its id is not above the last one) instead of doubling the line.
      let lines = 0;
      const line = (value: unknown) => {
        lines += 1;
        send(
          redis
            .xadd(key, `0-${lines}`, "l", redactSecrets(JSON.stringify(value), secrets))
            .catch((err: unknown) => {
              if (!isRepeatedEntry(err)) throw err;
            }),
        );
      };
      line(header);
      let committed = false;
      const commit = () => {
        if (committed) return;
        committed = true;
        send(redis.eval(SWAP, 1, pointers, id, key, `${prefix}:tape:`));
      };
      if (replace === "now") commit();
      const stored = async () => {
        while (pending.size > 0) await Promise.all([...pending]);
        if (lost !== undefined)
          throw new Error(`the tape of task ${id} lost frames on the way to Redis: ${String(lost)}`);
      };
      return {
        write: line,
        commit,
        // While Redis is away the lines wait in the client's queue: so does the flush.
        flush: (signal) => untilAborted(stored(), signal),
        async close() {
          while (pending.size > 0) await Promise.all([...pending]);
          if (!committed) await redis.del(key);
          await stored();
        },
      } satisfies TapeWriter;
    },
    location: (id) => `redis:${pointers}#${id}`,
  };
}

/** The error Redis answers an entry whose id is not above the stream's last: the line is there already. */
function isRepeatedEntry(err: unknown): boolean {
  return err instanceof Error && /equal or smaller than the target stream top item/.test(err.message);
}

/**
 * Longest tape read back from Redis, in characters: a longer one (a run gone wild, or planted by
 * anyone who can write to the Redis) would pass the longest string V8 makes (~512 MB).
 */
export const REDIS_TAPE_MAX_CHARS = 256 * 1024 * 1024;

/** Stream entries read at a time. */
const PAGE = 1_000;

/**
 * The task's tape as the text of a `.tape` file (header line, then one frame per line), if any:
 * read a page at a time; over `maxChars` it throws `tape_invalid` (fault `user`) naming the size.
 */
export async function readTapeText(
  redis: Redis,
  prefix: string,
  id: string,
  maxChars = REDIS_TAPE_MAX_CHARS,
): Promise<string | undefined> {
  const pointer = await redis.hget(`${prefix}:tapes`, id);
  if (pointer === null) return undefined;
  const key = tapeKeyOf(prefix, pointer);
  if (key === undefined)
    throw new EddyError("tape_invalid", `the tape of task ${id}: its pointer names no tape of this batch`);
  const parts: string[] = [];
  let chars = 0;
  let from = "-";
  for (;;) {
    const entries = await redis.xrange(key, from, "+", "COUNT", PAGE);
    for (const [, fields] of entries) {
      const line = `${fields[1] ?? ""}\n`;
      chars += line.length;
      if (chars > maxChars)
        throw new EddyError(
          "tape_invalid",
          `the tape of task ${JSON.stringify(id.slice(0, 80))} in Redis is larger than ${maxChars.toLocaleString("en-US")} characters; it is not read`,
          { fault: "user" },
        );
      parts.push(line);
    }
    if (entries.length < PAGE) return parts.join("");
    from = `(${(entries.at(-1) as [string, string[]])[0]}`;
  }
}

/** Removes the task's tape from Redis (once the coordinator has it on disk). */
export async function dropTape(redis: Redis, prefix: string, id: string): Promise<void> {
  const pointer = await redis.hget(`${prefix}:tapes`, id);
  const key = pointer === null ? undefined : tapeKeyOf(prefix, pointer);
  if (key !== undefined) await redis.del(key);
  await redis.hdel(`${prefix}:tapes`, id);
}
