/** A broadcast of events to any number of async iterators, each from the moment it subscribed. */

/** One subscriber's buffer. */
interface Subscriber<T> {
  buffer: T[];
  wake: (() => void) | undefined;
}

/** Pushes events to every open iterator; `close()` ends them all once they have read what was pushed. */
export class Feed<T> {
  private readonly subscribers = new Set<Subscriber<T>>();
  private closed = false;

  push(event: T): void {
    for (const s of this.subscribers) {
      s.buffer.push(event);
      s.wake?.();
    }
  }

  close(): void {
    this.closed = true;
    for (const s of this.subscribers) s.wake?.();
  }

  /** An iterator over the events pushed from now on. */
  subscribe(): AsyncIterableIterator<T> {
    const sub: Subscriber<T> = { buffer: [], wake: undefined };
    this.subscribers.add(sub);
    const feed = this;
    const iterator: AsyncIterableIterator<T> = {
      async next(): Promise<IteratorResult<T>> {
        for (;;) {
          const event = sub.buffer.shift();
          if (event !== undefined) return { value: event, done: false };
          if (feed.closed) return this.return?.() ?? { value: undefined, done: true };
          await new Promise<void>((resolve) => {
            sub.wake = resolve;
          });
          sub.wake = undefined;
        }
      },
      async return(): Promise<IteratorResult<T>> {
        feed.subscribers.delete(sub);
        return { value: undefined, done: true };
      },
      [Symbol.asyncIterator]() {
        return iterator;
      },
    };
    return iterator;
  }
}
