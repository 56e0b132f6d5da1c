import { spawnSync } from "node:child_process";
import {
  closeSync,
  constants,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { frame } from "../frames/frame.js";
import {
  createTapeRecorder,
  openTapeFile,
  releaseTapeFile,
  reserveTapeFile,
  TapeWriteError,
  TapeWriteGuard,
} from "./recorder.js";
import type { TapeHeader } from "./tape.js";

const dir = mkdtempSync(join(tmpdir(), "eddy-recorder-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HEADER = { type: "tape_header", format: 3 } as unknown as TapeHeader;

function fifo(name: string): string {
  const path = join(dir, name);
  spawnSync("mkfifo", [path]);
  return path;
}

describe("a tape reserved before its run", () => {
  it("leaves a file that is there untouched until the recorder starts, then writes it from the start", () => {
    const path = join(dir, "old.tape");
    writeFileSync(path, "an older tape, longer than the new one will be\n".repeat(20));
    const reserved = reserveTapeFile(path);
    expect(reserved.created).toBe(false);
    expect(readFileSync(path, "utf8")).toContain("an older tape");
    const recorder = createTapeRecorder(path, HEADER, [], reserved);
    recorder.observer(frame("run_started", { model: "m", mode: "chained", input: "hi", tools: [] }));
    recorder.close();
    const lines = readFileSync(path, "utf8").trimEnd().split("\n");
    expect(lines.map((l) => JSON.parse(l).type)).toEqual(["tape_header", "run_started"]);
  });

  it("given back unused: a file it made is removed, a file that was there is kept as it was", () => {
    const made = join(dir, "made.tape");
    releaseTapeFile(reserveTapeFile(made));
    expect(existsSync(made)).toBe(false);
    const kept = join(dir, "kept.tape");
    writeFileSync(kept, "keep\n");
    releaseTapeFile(reserveTapeFile(kept));
    expect(readFileSync(kept, "utf8")).toBe("keep\n");
    const empty = join(dir, "empty.tape");
    writeFileSync(empty, "");
    releaseTapeFile(reserveTapeFile(empty));
    expect(existsSync(empty)).toBe(true);
  });
});

describe.each([
  ["reserveTapeFile", (path: string) => releaseTapeFile(reserveTapeFile(path))],
  ["openTapeFile", (path: string) => closeSync(openTapeFile(path))],
] as const)("%s refuses what is not a regular file, at once", (_name, open) => {
  it("a FIFO no one reads (opening it for writing used to block the process where no signal reached it)", () => {
    expect(() => open(fifo(`lonely-${_name}.fifo`))).toThrow(
      /cannot write the tape .*lonely.*\.fifo: it is a FIFO \(named pipe\), not a regular file/,
    );
  });

  it("a FIFO someone reads", () => {
    const path = fifo(`read-${_name}.fifo`);
    const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      expect(() => open(path)).toThrow(/it is a FIFO \(named pipe\), not a regular file/);
    } finally {
      closeSync(reader);
    }
  });

  it("a device, a directory, a folder that is not there", () => {
    expect(() => open("/dev/null")).toThrow(/cannot write the tape \/dev\/null: it is a character device/);
    expect(() => open(dir)).toThrow(/cannot write the tape .*: EISDIR/);
    expect(() => open(join(dir, "no-such-folder", "t.tape"))).toThrow(/cannot write the tape .*: ENOENT/);
  });
});

describe("a tape write that fails", () => {
  it("is said once with the path; the guard hands on the problem without it", () => {
    const path = join(dir, "unwritable.tape");
    const recorder = createTapeRecorder(path, HEADER);
    const stops: string[] = [];
    const guard = new TapeWriteGuard((problem) => stops.push(problem));
    // A value JSON.stringify cannot write (the guard sees the recorder's own error).
    const bad = { ...frame("run_started", {} as never), big: 1n } as never;
    guard.write(() => recorder.observer(bad));
    guard.write(() => recorder.observer(bad)); // after the first failure, nothing more is tried
    recorder.close();
    expect(stops).toHaveLength(1);
    expect(guard.problem).toMatch(/BigInt/);
    expect(guard.problem).not.toContain(path);
    let thrown: unknown;
    try {
      createTapeRecorder(join(dir, "other.tape"), HEADER).observer(bad);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(TapeWriteError);
    const message = (thrown as Error).message;
    expect(message.match(/cannot write the tape/g)).toHaveLength(1);
    expect(message).toMatch(/other\.tape: .*BigInt/);
  });
});
