import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FILE_CHANGE_CONTENT_CAP, fileChangeRecord } from "./file-changes.js";
import { checkFileChanges, UNDO_MAX_CHANGES, undoFileChanges } from "./file-undo.js";

const ws = () => mkdtempSync(join(tmpdir(), "eddy-undo-"));

describe("undoFileChanges", () => {
  it("restores the first before of each file (a created file is removed) when each still holds the last after", async () => {
    const dir = ws();
    writeFileSync(join(dir, "a.txt"), "v3");
    writeFileSync(join(dir, "new.txt"), "created");
    const restored = await undoFileChanges(
      [
        fileChangeRecord("a.txt", Buffer.from("v1"), "v2"),
        fileChangeRecord("new.txt", null, "created"),
        fileChangeRecord("a.txt", Buffer.from("v2"), "v3"),
      ],
      dir,
    );
    expect(restored).toEqual(["a.txt", "new.txt"]);
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("v1");
    expect(() => readFileSync(join(dir, "new.txt"))).toThrow(/ENOENT/);
  });

  it("a file to be absent under a folder that is gone is left absent (the folder was an internal error)", async () => {
    const dir = ws();
    const record = { path: "a/b/c.txt", encoding: "utf8", before: null, after: null };
    expect(await undoFileChanges(checkFileChanges([record]), dir)).toEqual(["a/b/c.txt"]);
    expect(() => readFileSync(join(dir, "a"))).toThrow(/ENOENT/);
  });

  it("keeps bytes that are not UTF-8 (base64)", async () => {
    const dir = ws();
    const bytes = Buffer.from([0xff, 0xfe, 0x00, 0x80]);
    writeFileSync(join(dir, "b.bin"), "text");
    const record = fileChangeRecord("b.bin", bytes, "text");
    expect(record.encoding).toBe("base64");
    await undoFileChanges([record], dir);
    expect(readFileSync(join(dir, "b.bin")).equals(bytes)).toBe(true);
  });

  it("refuses everything, naming the file, when one changed since; nothing is restored", async () => {
    const dir = ws();
    writeFileSync(join(dir, "a.txt"), "after");
    writeFileSync(join(dir, "b.txt"), "edited");
    const changes = [
      fileChangeRecord("a.txt", Buffer.from("before"), "after"),
      fileChangeRecord("b.txt", null, "after"),
    ];
    await expect(undoFileChanges(changes, dir)).rejects.toThrow(/b\.txt \(it changed since\)/);
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("after");
  });

  it("refuses base64 that is not (Node would decode it leniently and write garbage)", async () => {
    const dir = ws();
    writeFileSync(join(dir, "b.bin"), "now");
    for (const before of ["not base64!", "QUJD=", "QUJ", "QU JD"]) {
      const record = {
        path: "b.bin",
        encoding: "base64",
        before,
        after: Buffer.from("now").toString("base64"),
      };
      expect(() => checkFileChanges([record])).toThrow(/before is not base64/);
    }
    expect(readFileSync(join(dir, "b.bin"), "utf8")).toBe("now");
    const good = { path: "b.bin", encoding: "base64", before: "QUJD", after: "bm93" };
    expect(await undoFileChanges(checkFileChanges([good]), dir)).toEqual(["b.bin"]);
    expect(readFileSync(join(dir, "b.bin"), "utf8")).toBe("ABC");
  });

  it("refuses a change too large to have been recorded", async () => {
    const dir = ws();
    const big = Buffer.alloc(FILE_CHANGE_CONTENT_CAP + 1, 97);
    const record = fileChangeRecord("big.txt", null, big);
    expect(record).toEqual({ path: "big.txt", encoding: "utf8", omitted: "too_large" });
    await expect(undoFileChanges([record], dir)).rejects.toThrow(/was not recorded/);
  });
});

describe("undo records from a tape are untrusted", () => {
  const ok = { path: "a.txt", encoding: "utf8", before: "x", after: "y" };
  it.each([
    ["not a list", { path: "a" }, /not a list/],
    ["a record that is not an object", ["a.txt"], /not an object/],
    ["an unknown field", [{ ...ok, mode: 0o777 }], /unknown field "mode"/],
    ["a path that is not a string", [{ ...ok, path: 42 }], /path must be/],
    ["an empty path", [{ ...ok, path: "" }], /path must be/],
    ["a NUL in the path", [{ ...ok, path: "a\u0000b" }], /path must be/],
    ["an unknown encoding", [{ ...ok, encoding: "hex" }], /encoding/],
    ["content of the wrong type", [{ ...ok, before: 5 }], /before must be a string or null/],
    ["a missing side", [{ path: "a.txt", encoding: "utf8", after: "y" }], /before is missing/],
    ["oversize content", [{ ...ok, before: "x".repeat(FILE_CHANGE_CONTENT_CAP * 2 + 1) }], /larger than/],
    [
      "oversize base64 content",
      [{ ...ok, encoding: "base64", before: "A".repeat(FILE_CHANGE_CONTENT_CAP * 2), after: "" }],
      /larger than/,
    ],
    ["too many records", Array.from({ length: UNDO_MAX_CHANGES + 1 }, () => ok), /more than/],
  ])("refuses %s", (_name, value, message) => {
    expect(() => checkFileChanges(value)).toThrow(message);
  });

  it.each([
    ["..", "../outside.txt"],
    ["an absolute path", "/etc/passwd"],
    ["a home path", "~/x"],
    ["the workspace root", "."],
  ])("refuses %s and writes nothing", async (_name, path) => {
    const dir = ws();
    await expect(
      undoFileChanges([{ path, encoding: "utf8", before: "pwned", after: null }], dir),
    ).rejects.toThrow(/refused|root/);
  });

  it("refuses a path through a symlink that leaves the workspace", async () => {
    const dir = ws();
    const outside = ws();
    writeFileSync(join(outside, "target.txt"), "after");
    symlinkSync(outside, join(dir, "link"));
    await expect(
      undoFileChanges([{ path: "link/target.txt", encoding: "utf8", before: "pwned", after: "after" }], dir),
    ).rejects.toThrow(/symlink/);
    expect(readFileSync(join(outside, "target.txt"), "utf8")).toBe("after");
  });

  it("does not write through a file that is a symlink now", async () => {
    const dir = ws();
    const outside = ws();
    writeFileSync(join(outside, "t.txt"), "after");
    mkdirSync(join(dir, "d"));
    symlinkSync(join(dir, "d", "real.txt"), join(dir, "d", "f.txt"));
    writeFileSync(join(dir, "d", "real.txt"), "after");
    await expect(
      undoFileChanges([{ path: "d/f.txt", encoding: "utf8", before: "pwned", after: "after" }], dir),
    ).resolves.toEqual(["d/f.txt"]);
    // The symlink resolved inside: the real file it names was restored, nothing outside touched.
    expect(readFileSync(join(outside, "t.txt"), "utf8")).toBe("after");
  });
});
