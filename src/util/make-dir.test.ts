import { existsSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeDir, makeDirSync } from "./make-dir.js";

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
