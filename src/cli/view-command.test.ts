import { chmodSync, existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanEnv, runCli } from "../../test/support/cli.js";
import { recordMockRun } from "../../test/support/record.js";
import { browserCommand } from "./view-command.js";

describe("browserCommand", () => {
  it.each([
    ["darwin", {}, ["open"]],
    ["win32", {}, ["cmd", "/c", "start", '""']],
    ["linux", { DISPLAY: ":0" }, ["xdg-open"]],
    ["linux", { WAYLAND_DISPLAY: "wayland-0" }, ["xdg-open"]],
    ["linux", {}, undefined],
    ["linux", { DISPLAY: "" }, undefined],
    ["freebsd", { DISPLAY: ":1" }, ["xdg-open"]],
  ] as const)("%s with %j → %j", (platform, env, command) => {
    expect(browserCommand(env, platform as NodeJS.Platform)).toEqual(command);
  });
});

describe("eddy view (CLI)", () => {
  const dir = mkdtempSync(join(tmpdir(), "eddy-view-cli-"));

  async function tape(): Promise<string> {
    const path = join(dir, "run.tape");
    if (!existsSync(path)) await recordMockRun({ prompt: "hello", workspace: dir, tape: path });
    return path;
  }

  /** An `xdg-open` on PATH that writes what it was asked to open. */
  function fakeOpener(): { env: Record<string, string>; opened: string } {
    const bin = mkdtempSync(join(dir, "bin-"));
    const opened = join(bin, "opened.txt");
    writeFileSync(join(bin, "xdg-open"), `#!/bin/sh\nprintf '%s' "$1" > "${opened}"\n`);
    chmodSync(join(bin, "xdg-open"), 0o755);
    return { env: { PATH: `${bin}:${process.env.PATH ?? ""}` }, opened };
  }

  async function waitFor(path: string): Promise<string> {
    for (let i = 0; i < 100 && !existsSync(path); i++) await new Promise((r) => setTimeout(r, 50));
    return readFileSync(path, "utf8");
  }

  it("writes the page to --out and prints its path", async () => {
    const out = join(dir, "page.html");
    const result = await runCli(["view", await tape(), "--out", out]);
    expect(result).toMatchObject({ code: 0, stdout: `${out}\n`, stderr: "" });
    expect(readFileSync(out, "utf8")).toMatch(/^<!doctype html>/);
  });

  it("without --out writes a temporary file and opens it when there is a display", async () => {
    const opener = fakeOpener();
    const tmp = mkdtempSync(join(dir, "tmp-"));
    const result = await runCli(["view", await tape()], {
      env: cleanEnv({ ...opener.env, DISPLAY: ":99", TMPDIR: tmp }),
    });
    expect(result.code).toBe(0);
    const page = result.stdout.trim();
    expect(page.startsWith(join(tmp, "eddy-view-"))).toBe(true);
    expect(page.endsWith("/run.html")).toBe(true);
    expect(await waitFor(opener.opened)).toBe(page);
  });

  it("does not open a browser without a display, with --no-open, or with --out", async () => {
    for (const [args, env] of [
      [[], {}],
      [["--no-open"], { DISPLAY: ":99" }],
      [["--out", join(dir, "o.html")], { DISPLAY: ":99" }],
    ] as const) {
      const opener = fakeOpener();
      const result = await runCli(["view", await tape(), ...args], {
        env: cleanEnv({ ...opener.env, ...env }),
      });
      expect(result.code).toBe(0);
      expect(existsSync(result.stdout.trim())).toBe(true);
      await new Promise((r) => setTimeout(r, 200));
      expect(existsSync(opener.opened)).toBe(false);
    }
  });

  it.each([
    [["view"], "eddy: give tapes, a batch folder, or --live URL"],
    [["view", "/nonexistent/a.tape"], "eddy: cannot read tape /nonexistent/a.tape: ENOENT"],
  ])("%j exits 2 with one line", async (args, message) => {
    const result = await runCli(args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toContain(message.replace("eddy: error: ", ""));
  });

  it("a bad tape or an unwritable --out exits 2 naming the problem", async () => {
    const bad = join(dir, "bad.tape");
    writeFileSync(bad, '{"type":"tape_header","format":7}\n');
    const newer = await runCli(["view", bad, "--out", join(dir, "x.html")]);
    expect(newer.code).toBe(2);
    expect(newer.stderr).toContain("tape format 7 is newer than this eddy reads");
    const unwritable = await runCli(["view", await tape(), "--out", join(dir, "missing-dir", "x.html")]);
    expect(unwritable.code).toBe(2);
    expect(unwritable.stderr).toContain("cannot write");
    expect(unwritable.stderr).toContain("ENOENT");
  });

  it("refuses an --out that is a tape it reads, by any name, and leaves the tape whole", async () => {
    const copy = join(dir, "keep.tape");
    writeFileSync(copy, readFileSync(await tape()));
    const before = readFileSync(copy, "utf8");
    const folder = mkdtempSync(join(dir, "folder-"));
    writeFileSync(join(folder, "a.tape"), before);
    symlinkSync(copy, join(dir, "link.html"));
    // Before: the page replaced the tape it was made from (`eddy view keep.tape --out keep.tape`).
    for (const [args, where] of [
      [[copy, "--out", copy], "a file"],
      [[copy, "--out", join(dir, "link.html")], "a file"],
      [[folder, "--out", join(folder, "a.tape")], "in a folder"],
    ] as const) {
      const r = await runCli(["view", ...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(
        new RegExp(`^eddy: --out \\S+ is ${where} the page is made from: .*give another --out\\n$`),
      );
    }
    expect(readFileSync(copy, "utf8")).toBe(before);
    expect(readFileSync(join(folder, "a.tape"), "utf8")).toBe(before);
    // A page beside the tapes, or replacing an older page, is fine.
    expect((await runCli(["view", folder, "--out", join(folder, "page.html")])).code).toBe(0);
    expect((await runCli(["view", copy, "--out", join(folder, "page.html")])).code).toBe(0);
  });
});
