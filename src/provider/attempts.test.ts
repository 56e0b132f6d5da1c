import { describe, expect, it } from "vitest";
import { abortableSleep } from "./attempts.js";

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
