/**
 * What a batch's Redis connections go through, told once per change instead of once per client
 * per reconnect attempt. A coordinator or worker holds several connections (its own client and
 * BullMQ's queue, events and worker connections); while Redis is down each of them reports every
 * failed reconnect. ioredis prints `[ioredis] Unhandled error event` with a stack trace for a
 * client with no `error` listener, and BullMQ re-emits its connections' errors: every one of them
 * is listened to here, and the outage becomes one `connection_lost` notice, then one
 * `connection_restored` when the main client is ready again.
 */

/** Something that happened to the queue, for the user (see `describeQueueNotice` in the CLI). */
export type QueueNotice =
  /** The connection to Redis is lost (`where` is HOST:PORT, never the URL's password). */
  | { type: "connection_lost"; where: string; reason: string }
  /** It is back. */
  | { type: "connection_restored"; where: string }
  /** Coordinator: tasks whose jobs vanished from Redis (restarted empty, flushed) were queued again. */
  | { type: "tasks_requeued"; ids: string[] }
  /** Worker: a task's job vanished while it ran; its run is stopped and its result dropped. */
  | { type: "task_lost"; id: string; reason: string }
  /** Worker: a job whose data failed its check (`checkQueuedTask`) was failed without running; `job` is its BullMQ id. */
  | { type: "job_refused"; job: string; reason: string }
  /** Coordinator: a finished task's tape could not be kept (too large to read back); its result is. */
  | { type: "tape_not_kept"; id: string; reason: string }
  /** Worker: a job's data in Redis is not JSON (BullMQ could not read it): it is failed without running (`failUnreadableJobs`). */
  | { type: "job_unreadable"; reason: string };

/** An event emitter as ioredis clients and BullMQ classes are. */
interface Emitter {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
}

/** Watches connections to one Redis. */
export interface RedisWatch {
  /** Listens to `emitter`'s `error` events (every client and BullMQ object must be watched). */
  watch(emitter: Emitter): void;
  /** Listens to `client`'s `close` and `ready` events too: they say when the connection goes and comes back. */
  watchMain(client: Emitter): void;
  /** Stops telling (before the connections are closed on purpose). */
  stop(): void;
}

/**
 * A watch that tells `onNotice` once when the connection is lost and once when it is back;
 * `onOther` gets BullMQ's job-level errors (a job's key or lock is gone) instead.
 */
export function redisWatch(
  where: string,
  onNotice: (notice: QueueNotice) => void,
  onOther: (error: Error) => void = () => {},
): RedisWatch {
  let down = false;
  let stopped = false;
  let main: (Emitter & { status?: string }) | undefined;
  const lost = (reason: string) => {
    if (down || stopped) return;
    down = true;
    onNotice({ type: "connection_lost", where, reason });
  };
  const onError = (err: unknown) => {
    const error = err instanceof Error ? err : new Error(String(err));
    if (error instanceof SyntaxError) {
      // BullMQ parses a job's data as it takes the job: data that is not JSON (written by someone
      // else) fails there, and was said nowhere.
      if (!stopped) onNotice({ type: "job_unreadable", reason: error.message.split("\n")[0] ?? error.name });
      return;
    }
    if (!isConnectionError(error)) {
      if (!stopped) onOther(error);
      return;
    }
    // Another connection's late complaint while the main one is up (it reconnects on its own) is
    // not an outage: only what the main connection goes through is told.
    if (main?.status !== "ready") lost(reasonOf(error));
  };
  return {
    watch(emitter) {
      emitter.on("error", onError);
    },
    watchMain(client) {
      main = client;
      client.on("error", onError);
      // A server that goes away cleanly closes the socket without an error.
      client.on("close", () => lost("the connection closed"));
      client.on("ready", () => {
        if (!down || stopped) return;
        down = false;
        onNotice({ type: "connection_restored", where });
      });
    },
    stop() {
      stopped = true;
    },
  };
}

/** BullMQ's errors about one job (its key or lock is gone), as opposed to the connection's. */
const JOB_ERROR =
  /^(?:Missing key for job|Missing lock for job|Lock mismatch for job|could not renew lock for job|Job) (\S+?)\.?(?:\s|$)/;

/** The job id a BullMQ job-level error names, if it is one. */
export function jobOfError(error: Error): string | undefined {
  return JOB_ERROR.exec(error.message)?.[1];
}

/** Anything but a job-level error is the connection's (refused, reset, closed, out of retries). */
function isConnectionError(error: Error): boolean {
  return jobOfError(error) === undefined;
}

function reasonOf(error: Error): string {
  return (error as NodeJS.ErrnoException).code ?? error.message.split("\n")[0] ?? error.name;
}
