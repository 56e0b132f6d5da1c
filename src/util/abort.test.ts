import { afterEach, describe, expect, it, vi } from "vitest";
import { onAbort, untilAborted } from "./abort.js";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("onAbort", () => {
  it("calls each subscriber once, in the order they subscribed, with one listener on the signal", () => {
    const controller = new AbortController();
    const add = vi.spyOn(controller.signal, "addEventListener");
    const calls: string[] = [];
    onAbort(controller.signal, () => calls.push("a"));
    onAbort(controller.signal, () => calls.push("b"));
    const same = () => calls.push("c");
    onAbort(controller.signal, same);
    onAbort(controller.signal, same);
    expect(add).toHaveBeenCalledTimes(1);
    controller.abort();
    controller.abort();
    expect(calls).toEqual(["a", "b", "c", "c"]);
  });

  it("calls no subscriber that unsubscribed, and keeps serving the others", () => {
    const controller = new AbortController();
    const calls: string[] = [];
    const offA = onAbort(controller.signal, () => calls.push("a"));
    const offB = onAbort(controller.signal, () => calls.push("b"));
    offA();
    offA();
    for (let i = 0; i < 1_000; i++) onAbort(controller.signal, () => calls.push("never"))();
    onAbort(controller.signal, () => calls.push("c"));
    controller.abort();
    offB();
    expect(calls).toEqual(["b", "c"]);
  });

  it("a subscriber that throws does not stop the others; its error is rethrown from a microtask", () => {
    const deferred: Array<() => void> = [];
    vi.spyOn(globalThis, "queueMicrotask").mockImplementation((fn) => {
      deferred.push(fn);
    });
    const controller = new AbortController();
    const calls: string[] = [];
    onAbort(controller.signal, () => {
      throw new Error("a subscriber broke");
    });
    onAbort(controller.signal, () => calls.push("after"));
    controller.abort();
    expect(calls).toEqual(["after"]);
    expect(deferred).toHaveLength(1);
    expect(() => deferred[0]?.()).toThrow("a subscriber broke");
  });

  it("signals are apart: aborting one calls nothing subscribed to another", () => {
    const one = new AbortController();
    const two = new AbortController();
    const calls: string[] = [];
    onAbort(one.signal, () => calls.push("one"));
    onAbort(two.signal, () => calls.push("two"));
    two.abort();
    expect(calls).toEqual(["two"]);
  });
});

describe("untilAborted", () => {
  it("settles with the promise, or rejects with the reason when the signal aborts first", async () => {
    await expect(untilAborted(Promise.resolve(1), new AbortController().signal)).resolves.toBe(1);
    const controller = new AbortController();
    const waiting = untilAborted(new Promise(() => {}), controller.signal);
    controller.abort(new Error("stopped"));
    await expect(waiting).rejects.toThrow("stopped");
  });
});
