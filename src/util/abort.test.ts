import { afterEach, describe, expect, it, vi } from "vitest";
import { abortableSleep, onAbort, untilAborted } from "./abort.js";

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

describe("abortableSleep", () => {
  it("resolves after its time, with or without a signal", async () => {
    await expect(abortableSleep(5)).resolves.toBeUndefined();
    await expect(abortableSleep(5, new AbortController().signal)).resolves.toBeUndefined();
  });

  it("rejects with the signal's reason when it aborts first, also when aborted before", async () => {
    const controller = new AbortController();
    const waiting = abortableSleep(60_000, controller.signal);
    controller.abort(new Error("cancelled while waiting"));
    await expect(waiting).rejects.toThrow("cancelled while waiting");
    await expect(abortableSleep(10, controller.signal)).rejects.toThrow("cancelled while waiting");
  });

  it("a sleep that ended leaves the signal to the next sleep on it", async () => {
    const controller = new AbortController();
    await abortableSleep(5, controller.signal);
    const next = abortableSleep(60_000, controller.signal);
    controller.abort(new Error("later"));
    await expect(next).rejects.toThrow("later");
  });
});
