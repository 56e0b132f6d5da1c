/** Waiting on a promise that an `AbortSignal` may cut short. */

/**
 * `promise`, or a rejection with the signal's reason as soon as `signal` aborts (at once when it
 * already has). The promise itself goes on; only the wait ends. Without a signal, `promise` as is.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const unsubscribe = onAbort(signal, () => reject(signal.reason));
    promise.then(
      (v) => {
        unsubscribe();
        resolve(v);
      },
      (e: unknown) => {
        unsubscribe();
        reject(e);
      },
    );
  });
}

/** Each signal's subscribers, served by one `abort` listener per signal (`onAbort`). */
const subscribers = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `listener` once when `signal` aborts, unless the returned function unsubscribed it first.
 * One `abort` listener per signal serves every subscriber: a run's signal is listened to by each of
 * its requests and tool calls, and an EventTarget listener added and removed for each cost ~50 µs
 * of a request over HTTP, where a Set entry costs next to nothing (bench/README.md, "The turn").
 * Subscribers are called in the order they subscribed; one that throws does not stop the others
 * (its error is rethrown from a microtask, as an EventTarget reports a listener's). Check
 * `signal.aborted` first: a signal aborted already calls nothing.
 */
export function onAbort(signal: AbortSignal, listener: () => void): () => void {
  let set = subscribers.get(signal);
  if (set === undefined) {
    const fresh = new Set<() => void>();
    set = fresh;
    subscribers.set(signal, fresh);
    signal.addEventListener(
      "abort",
      () => {
        subscribers.delete(signal);
        const called = [...fresh];
        fresh.clear();
        for (const call of called) {
          try {
            call();
          } catch (err) {
            queueMicrotask(() => {
              throw err;
            });
          }
        }
      },
      { once: true },
    );
  }
  const own = set;
  // A wrapper per subscription: the same function subscribed twice is two subscriptions.
  const entry = () => listener();
  own.add(entry);
  return () => {
    own.delete(entry);
  };
}

/** setTimeout as a promise that rejects when `signal` aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      unsubscribe?.();
      resolve();
    }, ms);
    const unsubscribe =
      signal === undefined
        ? undefined
        : onAbort(signal, () => {
            clearTimeout(timer);
            reject(signal.reason);
          });
  });
}
