/**
 * `summarizeTape` reads a tape's header and ends only; whatever the tape's state, its answer — or
 * its error — must be the one reading the whole tape gives. Real tapes (recorded against the mock)
 * are cut at every kind of place and given odd heads and tails.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordMockRun } from "../../test/support/record.js";
import { readTape } from "./tape.js";
import { summarizeTape } from "./tape-summary.js";

const root = mkdtempSync(join(tmpdir(), "eddy-tape-summary-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const file = join(root, "case.tape");

/** A real tape's text; and one whose first and last lines are each over 64 KiB (read in pieces). */
let tape = "";
let longTape = "";
beforeAll(async () => {
  const workspace = join(root, "ws");
  mkdirSync(workspace);
  writeFileSync(join(workspace, "package.json"), '{"name":"demo"}\n');
  await recordMockRun({ prompt: "What is in package.json?", workspace, tape: join(root, "a.tape") });
  tape = readFileSync(join(root, "a.tape"), "utf8");
  const long = "é".repeat(50_000); // 100 KB of two-byte characters: a read may end inside one
  await recordMockRun({
    prompt: "What is in package.json?",
    workspace,
    tape: join(root, "b.tape"),
    instructions: long,
    scenario: { turns: [{ items: [{ type: "message", text: long }] }] },
  });
  longTape = readFileSync(join(root, "b.tape"), "utf8");
}, 60_000);

type Outcome =
  | { ok: true; header: unknown; first: unknown; last: unknown; frames: number }
  | { ok: false; error: string };

function whole(path: string): Outcome {
  try {
    const t = readTape(path);
    return { ok: true, header: t.header, first: t.frames[0], last: t.frames.at(-1), frames: t.frames.length };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

function summary(path: string): Outcome {
  try {
    return { ok: true, ...summarizeTape(path) };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

function summaryOf(text: string): Outcome {
  writeFileSync(file, text);
  return summary(file);
}

function wholeOf(text: string): Outcome {
  writeFileSync(file, text);
  return whole(file);
}

function agrees(text: string): Outcome {
  writeFileSync(file, text);
  const expected = whole(file);
  expect(summary(file)).toEqual(expected);
  return expected;
}

describe("summarizeTape agrees with reading the whole tape", () => {
  it("on real tapes, whole", () => {
    for (const t of [tape, longTape]) {
      const read = agrees(t);
      expect(read).toMatchObject({ ok: true, first: { type: "run_started" }, last: { type: "run_ended" } });
      expect(Buffer.byteLength(longTape.split("\n")[0] ?? "")).toBeGreaterThan(64 * 1024);
    }
  });

  it("on every cut of a real tape (a process that died mid-write)", () => {
    const bytes = Buffer.from(tape);
    const lineEnds = [...tape.matchAll(/\n/g)].map((m) => Buffer.byteLength(tape.slice(0, m.index)));
    const cuts = new Set<number>([0, 1, bytes.length - 1]);
    for (let at = 0; at < bytes.length; at += 397) cuts.add(at);
    for (const end of lineEnds) for (const d of [-1, 0, 1]) cuts.add(end + d);
    let frames = 0;
    for (const at of cuts) {
      if (at < 0 || at > bytes.length) continue;
      const read = agrees(bytes.subarray(0, at).toString());
      if (read.ok) frames = Math.max(frames, read.frames);
    }
    expect(frames).toBeGreaterThan(10);
  });

  it("on cuts of a tape whose first and last lines span several reads", () => {
    const bytes = Buffer.from(longTape);
    const firstEnd = bytes.indexOf(0x0a);
    const lastStart = bytes.lastIndexOf(0x0a, bytes.length - 2) + 1;
    for (const at of [
      firstEnd - 1,
      firstEnd + 1,
      firstEnd + 70_000,
      lastStart + 1,
      lastStart + 65_537,
      bytes.length - 2,
    ])
      agrees(bytes.subarray(0, at).toString());
  });

  it("on odd heads and tails", () => {
    const lines = tape.trimEnd().split("\n");
    const header = JSON.parse(lines[0] as string) as Record<string, unknown>;
    const cases = [
      "",
      "\n",
      `${lines[0]}\n`,
      `${lines[0]}`,
      `${lines[0]}\n\n${lines.slice(1).join("\n")}\n`, // a blank line after the header
      `${lines.join("\n")}\n\n\n`, // blank lines at the end
      `${lines.join("\r\n")}\r\n`, // CRLF
      `${lines.join("\n")}\n{"type":"run_ended"`, // a cut last write
      `${lines.join("\n")}\n5`, // a last line that is JSON but no object
      `${lines.join("\n")}\n{"type":"nope","seq":99}`, // JSON, not a frame
      `${lines.join("\n")}`, // no newline at the end
      `${lines[0]}\n${lines[1]}`, // one frame, no newline
      `${lines[0]}\n{"seq":`, // a cut first frame
      `${lines[0]}\n${lines[2]}\n`, // a first frame whose seq is not 0
      `${lines.slice(0, -1).join("\n")}\n${lines[1]}\n`, // a last frame whose seq does not fit
      `${JSON.stringify({ ...header, format: 2 })}\n${lines.slice(1).join("\n")}\n`, // an older format
      `${JSON.stringify({ ...header, format: 99 })}\n${lines.slice(1).join("\n")}\n`, // a newer one
      `${JSON.stringify({ ...header, spec: 5 })}\n${lines.slice(1).join("\n")}\n`,
      `not json\n${lines.slice(1).join("\n")}\n`,
      `[1]\n${lines.slice(1).join("\n")}\n`,
      `${lines[0]}\n\u0000\u001b[31m\n${lines.at(-1)}\n`,
      `${lines[0]}\n${"\u00ff".repeat(10)}\n`, // text that is not UTF-8 once written as latin1 below
    ];
    for (const [i, text] of cases.entries()) expect([i, summaryOf(text)]).toEqual([i, wholeOf(text)]);
    writeFileSync(file, Buffer.from(`${lines[0]}\n${lines[1]}\n\xff\xfe\n`, "latin1"));
    expect(summary(file)).toEqual(whole(file));
  });

  it("on files that are not tapes: the same one-line refusal", () => {
    const fifo = join(root, "fifo.tape");
    execFileSync("mkfifo", [fifo]);
    const dir = join(root, "dir.tape");
    mkdirSync(dir);
    const zero = join(root, "zero.tape");
    symlinkSync("/dev/zero", zero);
    for (const path of [fifo, dir, zero, join(root, "missing.tape")]) {
      const refused = summary(path);
      expect(refused).toEqual(whole(path));
      expect(refused).toMatchObject({ ok: false, error: expect.stringContaining(path) });
    }
  });
});
