import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeDir, makeDirSync, privateTempFolder } from "./make-dir.js";

const root = mkdtempSync(join(tmpdir(), "eddy-make-dir-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A folder procfs refuses with ENOENT although its parent exists: node's recursive mkdir spins on it forever. */
const PROC_MISSING = "/proc/eddy-no-such-folder/a/b";
const onLinux = existsSync("/proc/self");

describe.each([
  ["makeDirSync", async (path: string, mode?: number) => makeDirSync(path, mode)],
  ["makeDir", makeDir],
] as const)("%s", (name, make) => {
  it("creates every missing folder, and does nothing for a folder that exists", async () => {
    const path = join(root, name, "a", "b", "c");
    await make(path);
    expect(statSync(path).isDirectory()).toBe(true);
    await make(path);
    await make(join(root, name, "a", "b", ".."));
    expect(statSync(join(root, name, "a")).isDirectory()).toBe(true);
  });

  it("gives the created folders the mode asked for", async () => {
    const path = join(root, `${name}-mode`, "x");
    await make(path, 0o700);
    expect(statSync(path).mode & 0o777).toBe(0o700);
    expect(statSync(join(root, `${name}-mode`)).mode & 0o777).toBe(0o700);
  });

  it("throws ENOTDIR when a file is on the way, and leaves the file alone", async () => {
    const file = join(root, `${name}-file`);
    writeFileSync(file, "keep");
    await expect(make(join(file, "sub"))).rejects.toMatchObject({ code: "ENOTDIR" });
    await expect(make(file)).rejects.toMatchObject({ code: "ENOTDIR" });
    expect(statSync(file).isFile()).toBe(true);
  });

  it("follows a symlink to a folder, as mkdir -p does; a dangling one fails", async () => {
    const target = join(root, `${name}-target`);
    await make(target);
    symlinkSync(target, join(root, `${name}-link`));
    await make(join(root, `${name}-link`, "in"));
    expect(statSync(join(target, "in")).isDirectory()).toBe(true);
    symlinkSync(join(root, "nowhere"), join(root, `${name}-dangling`));
    await expect(make(join(root, `${name}-dangling`, "in"))).rejects.toMatchObject({ code: "EEXIST" });
  });

  it.runIf(onLinux)(
    "ends with ENOENT where procfs will not make a folder (node's own loops forever)",
    async () => {
      await expect(make(PROC_MISSING)).rejects.toMatchObject({ code: "ENOENT" });
    },
  );
});

describe("privateTempFolder (a batch's workspace copies, named by a queue job's batch id)", () => {
  const name = (what: string) => `eddy-test-private-${process.pid}-${what}`;
  const made: string[] = [];
  afterAll(() => {
    for (const path of made) rmSync(path, { recursive: true, force: true });
  });
  const planted = (what: string) => {
    const path = join(tmpdir(), name(what));
    made.push(path);
    return path;
  };

  it("makes the folder with mode 700, and takes it again as it is", () => {
    const path = planted("fresh");
    expect(privateTempFolder(name("fresh"))).toBe(path);
    expect(statSync(path).mode & 0o777).toBe(0o700);
    expect(privateTempFolder(name("fresh"))).toBe(path);
  });

  it("refuses a symlink planted under its name (the copies would replace what it points to)", () => {
    const victim = join(root, "victim");
    mkdirSync(join(victim, "t1"), { recursive: true });
    writeFileSync(join(victim, "t1", "keep.txt"), "precious\n");
    symlinkSync(victim, planted("link"));
    expect(() => privateTempFolder(name("link"))).toThrow(
      /is a symlink: eddy keeps task workspace copies only/,
    );
    expect(readdirSync(join(victim, "t1"))).toEqual(["keep.txt"]);
  });

  it("refuses a file, and a folder others may write to", () => {
    writeFileSync(planted("file"), "x");
    expect(() => privateTempFolder(name("file"))).toThrow(/is not a folder/);
    const open = planted("open");
    mkdirSync(open);
    chmodSync(open, 0o777);
    expect(() => privateTempFolder(name("open"))).toThrow(/is writable by others/);
  });
});
