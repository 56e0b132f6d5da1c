/**
 * A queue worker's copies folders go once idle (docs/decisions.md #42): a worker never knows a
 * batch is over, and every batch it served used to leave its folder (up to 20 failed tasks' copies)
 * in the temporary folder for good. Only folders eddy made and marked are removed; a fresh one and
 * one a job in flight uses stay; hostile markers and look-alikes are never touched. A fake clock:
 * nothing sleeps.
 */
import { execFileSync } from "node:child_process";
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BATCH_DEFAULTS } from "./defaults.js";
import { COPIES_MARKER, lastUse, MARKER_TEXT, markFolder, workerCopies } from "./worker-copies.js";

const HOUR = 60 * 60 * 1000;
const KEEP = BATCH_DEFAULTS.workerCopiesKeepMs;

/** A temporary folder of its own and a clock that starts now and moves only when told. */
function setup() {
  const root = mkdtempSync(join(tmpdir(), "eddy-worker-copies-"));
  let time = Date.now();
  const problems: string[] = [];
  const copies = workerCopies({ root, now: () => time, onProblem: (line) => problems.push(line) });
  return {
    root,
    copies,
    problems,
    advance: (ms: number) => {
      time += ms;
    },
    now: () => time,
  };
}

/** A batch folder the worker made, with a copy in it, last used `ago` ms before `now`. */
function usedFolder(root: string, batch: string, now: number, ago: number): string {
  const folder = join(root, `eddy-batch-${batch}`);
  mkdirSync(join(folder, "t1", "sub"), { recursive: true, mode: 0o700 });
  writeFileSync(join(folder, "t1", "sub", "f.txt"), "x");
  markFolder(folder, now - ago, true);
  const at = (now - ago) / 1000;
  utimesSync(folder, at, at);
  return folder;
}

/**
 * Folders named like a batch's, marked, old, but `nobody`'s (the folder; its marker), when this
 * runs as root; none otherwise.
 */
function othersFolders(root: string, now: number): string[] {
  if (process.getuid?.() !== 0) return [];
  const folder = usedFolder(root, "nobodyfolder1", now, 2 * KEEP);
  const marker = usedFolder(root, "nobodymarker1", now, 2 * KEEP);
  const at = (now - 2 * KEEP) / 1000;
  for (const path of [folder, join(marker, COPIES_MARKER)]) {
    chownSync(path, 65534, 65534);
    utimesSync(path, at, at);
  }
  return [folder, marker];
}

describe("workerCopies: idle batch folders", () => {
  it("removes a folder idle longer than the retention, and only that one", async () => {
    const { root, copies, now, problems } = setup();
    const old = usedFolder(root, "oldbatch01", now(), KEEP + HOUR);
    const fresh = usedFolder(root, "freshbatch1", now(), KEEP - HOUR);
    expect(await copies.sweep()).toEqual([old]);
    expect(existsSync(old)).toBe(false);
    expect(readdirSync(root).sort()).toEqual(["eddy-batch-freshbatch1"]);
    expect(existsSync(join(fresh, "t1", "sub", "f.txt"))).toBe(true);
    expect(problems).toEqual([]);
  });

  it("keeps a folder a job in flight uses, however old, and removes it once idle after the job", async () => {
    const { root, copies, advance } = setup();
    copies.started("busybatch1");
    const folder = copies.folderFor("busybatch1");
    expect(readFileSync(join(folder, COPIES_MARKER), "utf8")).toBe(MARKER_TEXT);
    advance(3 * KEEP);
    expect(await copies.sweep()).toEqual([]);
    expect(existsSync(folder)).toBe(true);
    // The job ends: the folder was used just now.
    copies.ended("busybatch1");
    expect(await copies.sweep()).toEqual([]);
    advance(KEEP + 1);
    expect(await copies.sweep()).toEqual([folder]);
    expect(readdirSync(root)).toEqual([]);
  });

  it("keeps a folder another worker touched lately (its marker's mtime)", async () => {
    const { root, copies, now, advance } = setup();
    const folder = usedFolder(root, "sharedbatch", now(), 0);
    advance(KEEP - 1);
    // Another worker's job ends in it.
    markFolder(folder, now(), false);
    advance(KEEP - 1);
    expect(await copies.sweep()).toEqual([]);
    advance(2);
    expect(await copies.sweep()).toEqual([folder]);
  });

  it("a job in flight here keeps its folder fresh for another worker on this machine", async () => {
    const { root, copies, now, advance } = setup();
    const other = workerCopies({ root, now });
    copies.started("longbatch1");
    const folder = copies.folderFor("longbatch1");
    for (let hour = 0; hour < 48; hour++) {
      advance(HOUR);
      await copies.sweep();
      expect(await other.sweep()).toEqual([]);
    }
    expect(existsSync(folder)).toBe(true);
  });

  it("a folder made again after its removal works (a job starting later)", async () => {
    const { root, copies, now, advance } = setup();
    usedFolder(root, "againbatch", now(), 2 * KEEP);
    await copies.sweep();
    advance(1);
    const folder = copies.folderFor("againbatch");
    expect(statSync(folder).isDirectory()).toBe(true);
    expect(lastUse(folder)).toBe(Math.max(now(), statSync(folder).mtimeMs));
  });

  it("finishes a removal an earlier sweep left half-done", async () => {
    const { root, copies, now } = setup();
    const folder = usedFolder(root, "halfbatch1", now(), 0);
    const renamed = `${folder}.removing-0123456789abcdef`;
    execFileSync("mv", [folder, renamed]);
    expect(await copies.sweep()).toEqual([renamed]);
    expect(readdirSync(root)).toEqual([]);
  });
});

describe("workerCopies: what is never touched", () => {
  it("a folder without the marker, a symlink to a folder, a file, another user's folder, other names", async () => {
    const { root, copies, now, problems } = setup();
    const unmarked = join(root, "eddy-batch-unmarked1");
    mkdirSync(join(unmarked, "t1"), { recursive: true });
    const target = usedFolder(
      mkdtempSync(join(tmpdir(), "eddy-worker-copies-target-")),
      "target01",
      now(),
      2 * KEEP,
    );
    symlinkSync(target, join(root, "eddy-batch-symlinked1"));
    writeFileSync(join(root, "eddy-batch-afile0001"), "not a folder");
    const others = othersFolders(root, now());
    const misnamed = usedFolder(root, "UPPERCASE1", now(), 2 * KEEP);
    const short = usedFolder(root, "short", now(), 2 * KEEP);
    const at = (now() - 2 * KEEP) / 1000;
    for (const path of [unmarked, join(unmarked, "t1")]) utimesSync(path, at, at);
    const before = readdirSync(root).sort();
    expect(await copies.sweep()).toEqual([]);
    expect(readdirSync(root).sort()).toEqual(before);
    expect(readdirSync(unmarked)).toEqual(["t1"]);
    expect(readdirSync(target).sort()).toEqual([COPIES_MARKER, "t1"]);
    for (const folder of others) expect(readdirSync(folder).sort()).toEqual([COPIES_MARKER, "t1"]);
    expect(existsSync(misnamed) && existsSync(short)).toBe(true);
    expect(problems).toEqual([]);
  });

  it("hostile markers — a FIFO, a symlink to a marker, a huge file, other text — neither hang nor count", async () => {
    const { root, copies, now, problems } = setup();
    const fifo = usedFolder(root, "fifomarker1", now(), 2 * KEEP);
    execFileSync("rm", [join(fifo, COPIES_MARKER)]);
    execFileSync("mkfifo", [join(fifo, COPIES_MARKER)]);
    const linked = usedFolder(root, "linkmarker1", now(), 2 * KEEP);
    const real = usedFolder(
      mkdtempSync(join(tmpdir(), "eddy-worker-copies-real-")),
      "realmark1",
      now(),
      2 * KEEP,
    );
    execFileSync("rm", [join(linked, COPIES_MARKER)]);
    symlinkSync(join(real, COPIES_MARKER), join(linked, COPIES_MARKER));
    const huge = usedFolder(root, "hugemarker1", now(), 2 * KEEP);
    truncateSync(join(huge, COPIES_MARKER), 8 * 1024 * 1024 * 1024);
    const wrong = usedFolder(root, "wrongmarker", now(), 2 * KEEP);
    writeFileSync(join(wrong, COPIES_MARKER), "x".repeat(Buffer.byteLength(MARKER_TEXT)));
    const folders = [fifo, linked, huge, wrong];
    const at = (now() - 2 * KEEP) / 1000;
    for (const folder of folders) utimesSync(folder, at, at);
    expect(await copies.sweep()).toEqual([]);
    for (const folder of folders) expect(readdirSync(folder).sort()).toEqual([COPIES_MARKER, "t1"]);
    // A job ending in such a folder does not touch (or hang on) its marker either.
    for (const batch of ["fifomarker1", "linkmarker1", "hugemarker1"]) copies.ended(batch);
    expect(statSync(join(huge, COPIES_MARKER)).size).toBe(8 * 1024 * 1024 * 1024);
    expect(problems).toHaveLength(2);
    for (const line of problems) expect(line).not.toContain("\n");
  });

  it("a folder whose marker cannot be written is used, said once, and never removed", () => {
    const { root, copies, problems } = setup();
    const folder = join(root, "eddy-batch-badmarker1");
    mkdirSync(join(folder, COPIES_MARKER), { recursive: true, mode: 0o700 });
    expect(copies.folderFor("badmarker1")).toBe(folder);
    expect(copies.folderFor("badmarker1")).toBe(folder);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^cannot mark .*eddy-batch-badmarker1 as eddy's \(.*\): it will not be removed when idle$/,
    );
  });

  it("a failed removal is one line, never a throw", async () => {
    const { root, copies, problems } = setup();
    const missing = join(root, "gone");
    const broken = workerCopies({ root: missing, onProblem: (line) => problems.push(line) });
    expect(await broken.sweep()).toEqual([]);
    expect(await copies.sweep()).toEqual([]);
    expect(problems).toEqual([
      expect.stringMatching(/^cannot look for idle workspace copies in .*gone: ENOENT/),
    ]);
  });

  it("start sweeps at once and its timer does not hold the process", async () => {
    const { root, now } = setup();
    const old = usedFolder(root, "startbatch1", now(), 2 * KEEP);
    const copies = workerCopies({ root, now });
    copies.start();
    await copies.sweep();
    copies.stop();
    expect(existsSync(old)).toBe(false);
  });
});
