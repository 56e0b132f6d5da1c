import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { jobOfError, type QueueNotice, redisWatch } from "./redis-watch.js";

describe("redisWatch", () => {
  it("an outage seen by every client, many times, is one notice; the main client's ready is another", () => {
    const notices: QueueNotice[] = [];
    const others: string[] = [];
    const watch = redisWatch(
      "127.0.0.1:6379",
      (n) => notices.push(n),
      (e) => others.push(e.message),
    );
    const main = Object.assign(new EventEmitter(), { status: "ready" });
    const queue = new EventEmitter();
    watch.watchMain(main);
    watch.watch(queue);
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6379"), { code: "ECONNREFUSED" });
    queue.emit("error", new Error("Connection is closed.")); // the main connection is up: not an outage
    main.status = "reconnecting";
    main.emit("close");
    for (let i = 0; i < 5; i++) {
      main.emit("error", refused);
      queue.emit("error", refused);
      queue.emit("error", new Error("Connection is closed."));
    }
    main.status = "ready";
    main.emit("ready");
    queue.emit("error", refused); // late, from a connection still reconnecting
    queue.emit("error", new Error("Missing lock for job b-1. moveToFinished"));
    main.status = "connecting";
    main.emit("error", refused);
    expect(notices).toEqual([
      { type: "connection_lost", where: "127.0.0.1:6379", reason: "the connection closed" },
      { type: "connection_restored", where: "127.0.0.1:6379" },
      { type: "connection_lost", where: "127.0.0.1:6379", reason: "ECONNREFUSED" },
    ]);
    expect(others).toEqual(["Missing lock for job b-1. moveToFinished"]);
  });

  it("a job whose data BullMQ cannot parse is said (it was taken for a connection's complaint and dropped)", () => {
    const notices: QueueNotice[] = [];
    const watch = redisWatch("h:1", (n) => notices.push(n));
    const main = Object.assign(new EventEmitter(), { status: "ready" });
    const worker = new EventEmitter();
    watch.watchMain(main);
    watch.watch(worker);
    worker.emit("error", new SyntaxError("Expected property name or '}' in JSON at position 1"));
    expect(notices).toEqual([
      { type: "job_unreadable", reason: "Expected property name or '}' in JSON at position 1" },
    ]);
  });

  it("says nothing once stopped (the connections are being closed on purpose)", () => {
    const notices: QueueNotice[] = [];
    const watch = redisWatch("h:1", (n) => notices.push(n));
    const main = new EventEmitter();
    watch.watchMain(main);
    watch.stop();
    main.emit("close");
    main.emit("error", new Error("Connection is closed."));
    expect(notices).toEqual([]);
  });

  it.each([
    ["Missing key for job b-abc. moveToFinished", "b-abc"],
    ["Missing lock for job b-abc. moveToFinished", "b-abc"],
    ["could not renew lock for job b-abc", "b-abc"],
    ["Lock mismatch for job b-abc. Cmd moveToFinished from active", "b-abc"],
    ["Job b-abc is not in the active state. moveToFinished", "b-abc"],
    ["connect ECONNREFUSED 127.0.0.1:6379", undefined],
    ["Connection is closed.", undefined],
  ])("jobOfError(%j) = %j", (message, id) => {
    expect(jobOfError(new Error(message))).toBe(id);
  });
});
