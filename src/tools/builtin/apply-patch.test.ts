import { execFileSync } from "node:child_process";
import { access, lstat, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { allBuiltins, createSandbox, runTool, type Sandbox } from "../test-support/workspace.js";
import { commitChanges, type FileChange, type PatchIo, workspaceIo } from "./apply-patch.js";

let box: Sandbox;
const registry = allBuiltins();

const SERVER_TS = `import { createServer } from "node:http";

const PORT = 3000;

export function start() {
  const server = createServer((req, res) => {
    res.end("hello");
  });
  server.listen(PORT);
  return server;
}

export function stop(server) {
  server.close();
}
`;

beforeEach(async () => {
  box = await createSandbox();
  await box.files({
    "src/server.ts": SERVER_TS,
    "README.md": "# Demo\n\nRun it.\n",
    "old/legacy.js": "module.exports = 1;\n",
    "notes.txt": "a\nb\nc\n",
  });
});
afterEach(() => box.cleanup());

const apply = (...body: string[]) =>
  runTool(registry, box.root, "apply_patch", {
    patch: ["*** Begin Patch", ...body, "*** End Patch"].join("\n"),
  });
const content = (path: string) => readFile(join(box.root, path), "utf8");
const exists = (path: string) =>
  access(join(box.root, path)).then(
    () => true,
    () => false,
  );

describe("apply_patch: realistic patches", () => {
  it("updates a file with two hunks located by @@ lines", async () => {
    const r = await apply(
      "*** Update File: src/server.ts",
      '@@ import { createServer } from "node:http";',
      " ",
      "-const PORT = 3000;",
      "+const PORT = Number(process.env.PORT ?? 3000);",
      "@@ export function stop(server) {",
      "-  server.close();",
      "+  return new Promise((resolve) => server.close(resolve));",
      " }",
    );
    expect(r.ok).toBe(true);
    expect(r.parsed.stdout).toBe("Applied the patch:\nM src/server.ts");
    expect(r.parsed.artifacts).toEqual({ changed_files: ["src/server.ts"] });
    expect(await content("src/server.ts")).toBe(
      SERVER_TS.replace("const PORT = 3000;", "const PORT = Number(process.env.PORT ?? 3000);").replace(
        "  server.close();",
        "  return new Promise((resolve) => server.close(resolve));",
      ),
    );
  });

  it("adds, deletes, updates and moves in one patch", async () => {
    const r = await apply(
      "*** Add File: src/config/defaults.ts",
      "+export const DEFAULTS = {",
      "+  port: 3000,",
      "+};",
      "*** Delete File: old/legacy.js",
      "*** Update File: README.md",
      "*** Move to: docs/README.md",
      "@@",
      " # Demo",
      " ",
      "-Run it.",
      "+Run it with `npm start`.",
    );
    expect(r.ok).toBe(true);
    expect(r.parsed.stdout).toBe(
      "Applied the patch:\nA src/config/defaults.ts\nD old/legacy.js\nM README.md -> docs/README.md",
    );
    expect(await content("src/config/defaults.ts")).toBe("export const DEFAULTS = {\n  port: 3000,\n};\n");
    expect(await exists("old/legacy.js")).toBe(false);
    expect(await exists("README.md")).toBe(false);
    expect(await content("docs/README.md")).toBe("# Demo\n\nRun it with `npm start`.\n");
    expect(r.parsed.artifacts).toEqual({
      changed_files: ["src/config/defaults.ts", "old/legacy.js", "README.md", "docs/README.md"],
    });
  });

  it("applies a first hunk without @@ and an End of File hunk", async () => {
    const r = await apply(
      "*** Update File: notes.txt",
      " a",
      "-b",
      "+B",
      "@@",
      " c",
      "+d",
      "*** End of File",
    );
    expect(r.ok).toBe(true);
    expect(await content("notes.txt")).toBe("a\nB\nc\nd\n");
  });

  it("applies two operations on the same file in sequence", async () => {
    const r = await apply(
      "*** Update File: notes.txt",
      "@@",
      "-a",
      "+A",
      "*** Update File: notes.txt",
      "@@",
      "-c",
      "+C",
    );
    expect(r.ok).toBe(true);
    expect(await content("notes.txt")).toBe("A\nb\nC\n");
  });

  it("adds over an existing file (as Codex does)", async () => {
    const r = await apply("*** Add File: notes.txt", "+fresh");
    expect(r.ok).toBe(true);
    expect(await content("notes.txt")).toBe("fresh\n");
  });
});

describe("apply_patch and symlinks", () => {
  const lstatKind = (path: string) =>
    lstat(join(box.root, path)).then(
      (s) => (s.isSymbolicLink() ? "link" : "file"),
      () => "missing",
    );

  it("refuses to delete a symlink: the file it points to stays, and so does the link", async () => {
    await box.files({ "data.txt": "precious\n" });
    await box.link("alias", "data.txt");
    const r = await apply("*** Delete File: alias");
    expect(r.ok).toBe(false);
    expect(r.error?.message).toMatch(/alias is a symlink \(to data.txt\); a patch does not delete a symlink/);
    expect(await content("data.txt")).toBe("precious\n");
    expect(await lstatKind("alias")).toBe("link");
  });

  it("refuses to move a file onto a symlink (which would overwrite the file it points to)", async () => {
    await box.files({ "important.txt": "keep\n", "b.txt": "b\n" });
    await box.link("ilink", "important.txt");
    const r = await apply("*** Update File: b.txt", "*** Move to: ilink", "@@", "-b", "+B");
    expect(r.ok).toBe(false);
    expect(r.error?.message).toMatch(/ilink is a symlink \(to important.txt\); a patch does not move onto/);
    expect(await content("important.txt")).toBe("keep\n");
    expect(await content("b.txt")).toBe("b\n");
  });

  it("refuses to move a symlink away (which would remove the file it points to)", async () => {
    await box.files({ "data.txt": "d\n" });
    await box.link("alias", "data.txt");
    const r = await apply("*** Update File: alias", "*** Move to: moved.txt", "@@", "-d", "+D");
    expect(r.ok).toBe(false);
    expect(await content("data.txt")).toBe("d\n");
    expect(await exists("moved.txt")).toBe(false);
  });

  it("still updates a file through a symlink that stays inside (as write_file does)", async () => {
    await box.files({ "data.txt": "d\n" });
    await box.link("alias", "data.txt");
    const r = await apply("*** Update File: alias", "@@", "-d", "+D");
    expect(r.ok).toBe(true);
    expect(await content("data.txt")).toBe("D\n");
    expect(await lstatKind("alias")).toBe("link");
  });
});

describe("apply_patch: all or nothing", () => {
  it("a hunk that does not match changes no file and names the file and the line", async () => {
    const r = await apply(
      "*** Add File: created.txt",
      "+should not appear",
      "*** Update File: notes.txt",
      "@@",
      "-a",
      "+A",
      "*** Update File: src/server.ts",
      "@@",
      "   server.listen(PORT);",
      "-  return srv;",
      "+  return server;",
    );
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe("tool_failed");
    expect(r.error?.message).toBe(
      'apply_patch: nothing was changed. src/server.ts: a hunk (patch line 9) does not match the file: the line "  return srv;" was not found after "  server.listen(PORT);" (the hunk\'s first 1 line(s) matched). Read the file again and copy the context and \'-\' lines exactly.',
    );
    expect(await exists("created.txt")).toBe(false);
    expect(await content("notes.txt")).toBe("a\nb\nc\n");
  });

  it.each<[string, string[], string, RegExp]>([
    [
      "update of a missing file",
      ["*** Update File: nope.txt", "@@", "-a", "+b"],
      "tool_failed",
      /nope.txt: no such file; to create it use \*\*\* Add File/,
    ],
    ["delete of a missing file", ["*** Delete File: nope.txt"], "tool_failed", /nope.txt: no such file/],
    [
      "update of a directory",
      ["*** Update File: src", "@@", "-a", "+b"],
      "tool_failed",
      /src is a directory/,
    ],
    [
      "a syntax error",
      ["*** Update File: notes.txt", "a"],
      "tool_input_invalid",
      /invalid patch: line 3: unexpected line/,
    ],
  ])("refuses %s", async (_label, body, code, message) => {
    const r = await apply(...body);
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe(code);
    expect(r.error?.message).toMatch(message);
    expect(await content("notes.txt")).toBe("a\nb\nc\n");
  });

  it("refuses a FIFO (it is not read, and not replaced by a file)", async () => {
    execFileSync("mkfifo", [join(box.root, "pipe")]);
    const r = await apply("*** Update File: pipe", "@@", "+added");
    expect(r.ok).toBe(false);
    expect(r.error?.message).toBe(
      "apply_patch: pipe is a FIFO (named pipe), not a regular file; a patch only changes regular files",
    );
    expect((await lstat(join(box.root, "pipe"))).isFIFO()).toBe(true);
  });

  it("rolls back written files when a later write fails", async () => {
    const abs = (p: string) => join(box.root, p);
    const changes: FileChange[] = [
      {
        absolute: abs("notes.txt"),
        display: "notes.txt",
        original: Buffer.from("a\nb\nc\n"),
        next: "changed\n",
      },
      { absolute: abs("new/dir/file.txt"), display: "new/dir/file.txt", original: null, next: "new\n" },
      {
        absolute: abs("old/legacy.js"),
        display: "old/legacy.js",
        original: Buffer.from("module.exports = 1;\n"),
        next: null,
      },
      {
        absolute: abs("README.md"),
        display: "README.md",
        original: Buffer.from("# Demo\n\nRun it.\n"),
        next: "boom",
      },
    ];
    let writes = 0;
    const real = workspaceIo(box.root);
    const io: PatchIo = {
      ...real,
      write: async (path, data) => {
        writes++;
        if (path === abs("README.md") && writes <= 3)
          throw Object.assign(new Error("disk full"), { code: "ENOSPC" });
        await real.write(path, data);
      },
    };
    await expect(commitChanges(changes, io)).rejects.toThrow(
      "apply_patch: writing README.md: no space left on the device; nothing was changed (files already written were restored)",
    );
    expect(await content("notes.txt")).toBe("a\nb\nc\n");
    expect(await content("old/legacy.js")).toBe("module.exports = 1;\n");
    expect(await exists("new")).toBe(false);
    expect(await content("README.md")).toBe("# Demo\n\nRun it.\n");
  });
});

describe("apply_patch on a large file", () => {
  it("a cancelled call returns promptly while the hunks are being matched (the work runs in a worker)", async () => {
    // 20,000 identical lines and a 2,000-line hunk that only fails at its last line: matching it
    // compares millions of lines, far longer than a cancellation may take.
    await box.files({ "big.txt": "a\n".repeat(20_000) });
    const hunk = [...Array.from({ length: 2_000 }, () => " a"), "-b", "+c"];
    const controller = new AbortController();
    const pending = runTool(
      registry,
      box.root,
      "apply_patch",
      { patch: ["*** Begin Patch", "*** Update File: big.txt", "@@", ...hunk, "*** End Patch"].join("\n") },
      { signal: controller.signal },
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const abortedAt = performance.now();
    controller.abort();
    const r = await pending;
    expect(r.error?.code).toBe("cancelled");
    expect(performance.now() - abortedAt).toBeLessThan(2_000);
    expect(await content("big.txt")).toBe("a\n".repeat(20_000));
  });
});
