import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EddyError } from "../errors.js";
import { VIEW_LIMITS } from "./limits.js";
import { type FrameRecord, knownFrame, parseViewTape, readViewTape } from "./read.js";

const header = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    type: "tape_header",
    format: 1,
    eddy_version: "0.1.0",
    run_id: "r",
    model: "m",
    mode: "chained",
    input: "go",
    tools: [],
    limits: { max_tool_calls: 1, max_turns: 1 },
    provider: { name: "p", capabilities: {} },
    options: {},
    workspace: ".",
    ...extra,
  });
const frame = (seq: number, type = "run_started") => JSON.stringify({ run_id: "r", seq, ts: 1, type });

function problem(text: string): string {
  try {
    parseViewTape(text, "t.tape");
  } catch (err) {
    expect(EddyError.isInstance(err) && err.code.startsWith("tape_")).toBe(true);
    return (err as Error).message;
  }
  throw new Error("no error");
}

describe("parseViewTape", () => {
  it.each([
    ["an empty file", "\n\n", "t.tape: the tape is empty"],
    [
      "a bad line in the middle",
      `${header()}\n${frame(0)}\nnot json\n${frame(2)}\n`,
      "t.tape: line 3 is not a JSON object",
    ],
    [
      "a frame without seq",
      `${header()}\n{"run_id":"r","ts":1,"type":"x"}\n`,
      "t.tape: line 2: the frame has no integer `seq`",
    ],
    ["a newer tape format", `${header({ format: 99 })}\n`, "tape format 99 is newer than this eddy reads"],
    [
      "a header missing keys",
      `${JSON.stringify({ type: "tape_header", format: 1 })}\n`,
      'lacks "options", "limits" or "provider"',
    ],
    ["only non-frames", '{"hello":1}\n', "t.tape: line 1: the frame has no string `type`"],
  ])("refuses %s with a one-line message", (_label, text, message) => {
    expect(problem(text)).toContain(message);
  });

  it("keeps unknown frame types (a newer eddy's) and the raw lines as written", () => {
    const lines = [frame(0), frame(1, "from_the_future"), frame(2, "run_ended")];
    const tape = parseViewTape(`${header()}\r\n${lines.join("\r\n")}\r\n`, "t.tape");
    expect(tape.frames.map((f) => f.type)).toEqual(["run_started", "from_the_future", "run_ended"]);
    expect(tape.lines).toEqual(lines);
    expect(tape.cut).toBe(false);
    expect(knownFrame(tape.frames[1] as never)).toBeUndefined();
    expect(knownFrame(tape.frames[2] as never)?.type).toBe("run_ended");
  });

  it("refuses a frame nesting deeper than eddy replay reads, in one line (5,000 levels overflowed the stack)", () => {
    const deep = `{"run_id":"r","seq":1,"ts":1,"type":"x","a":${"[".repeat(5000)}${"]".repeat(5000)}}`;
    expect(problem(`${header()}\n${frame(0)}\n${deep}\n`)).toBe(
      "t.tape: line 3 nests deeper than 1032 levels",
    );
    const fine = `{"run_id":"r","seq":1,"ts":1,"type":"x","a":${"[".repeat(1000)}${"]".repeat(1000)}}`;
    expect(parseViewTape(`${header()}\n${frame(0)}\n${fine}\n`, "t.tape").frames).toHaveLength(2);
  });

  it("takes a byte order mark before the header, as eddy replay does", () => {
    const tape = parseViewTape(`\ufeff${header()}\n${frame(0)}\n`, "t.tape");
    expect(tape.header?.run_id).toBe("r");
    expect(tape.frames.map((f) => f.type)).toEqual(["run_started"]);
  });

  it("drops a partial last line only when the file ends without a newline (a crash)", () => {
    expect(parseViewTape(`${header()}\n${frame(0)}\n{"run_id":"r","se`, "t").cut).toBe(true);
    expect(problem(`${header()}\n${frame(0)}\n{"run_id":"r","se\n`)).toContain("line 3 is not a JSON object");
  });
});

describe("readViewTape", () => {
  const refused = (path: string): string => {
    try {
      readViewTape(path, { frame: () => {} });
    } catch (err) {
      expect(EddyError.isInstance(err) && err.fault === "user").toBe(true);
      return (err as Error).message;
    }
    throw new Error("no error");
  };

  it("refuses what is not a regular file at once: /dev/zero, a FIFO with no writer, a folder", () => {
    const dir = mkdtempSync(join(tmpdir(), "eddy-view-read-"));
    try {
      expect(refused("/dev/zero")).toBe(
        "tape /dev/zero is a character device, not a regular file: give a tape file",
      );
      const fifo = join(dir, "pipe.tape");
      execFileSync("mkfifo", [fifo]);
      expect(refused(fifo)).toBe(`tape ${fifo} is a FIFO (named pipe), not a regular file: give a tape file`);
      expect(refused(dir)).toBe(`tape ${dir} is a directory, not a regular file: give a tape file`);
      expect(refused(join(dir, "none.tape"))).toBe(`cannot read tape ${join(dir, "none.tape")}: ENOENT`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("hands frames on one at a time and skips a line too long to read, naming it by size", () => {
    const dir = mkdtempSync(join(tmpdir(), "eddy-view-read-"));
    try {
      const path = join(dir, "t.tape");
      const long = JSON.stringify({
        run_id: "r",
        seq: 1,
        ts: 1,
        type: "x",
        pad: "a".repeat(VIEW_LIMITS.lineBytes),
      });
      writeFileSync(path, `${header()}\n${frame(0)}\n${long}\n${frame(2, "run_ended")}\n`);
      const seen: FrameRecord[] = [];
      const unread: Array<[number, number]> = [];
      const scan = readViewTape(path, {
        frame: (record) => seen.push(record),
        unread: (line, bytes) => unread.push([line, bytes]),
      });
      expect(seen.map((f) => f.seq)).toEqual([0, 2]);
      expect(unread).toEqual([[3, long.length]]);
      expect(scan.problems).toEqual([
        "line 3 (32 MB) was not read: longer than the 32 MB a frame may have here",
      ]);
      expect(scan.header?.run_id).toBe("r");
      expect(scan.cut).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
