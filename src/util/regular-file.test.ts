import { spawnSync } from "node:child_process";
import {
  closeSync,
  constants,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EddyError } from "../errors.js";
import {
  appendRegularFileSync,
  readRegularFileSync,
  readRegularTextSync,
  sizeText,
  writeRegularFileSync,
} from "./regular-file.js";

const dir = mkdtempSync(join(tmpdir(), "eddy-regular-file-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const options = { what: "the tasks file", maxBytes: 1024 };

function thrown(fn: () => unknown): EddyError {
  try {
    fn();
  } catch (err) {
    if (EddyError.isInstance(err)) return err;
    throw err;
  }
  throw new Error("did not throw");
}

describe("readRegularFileSync", () => {
  it("reads a regular file up to the bound, exactly at it too", () => {
    const path = join(dir, "ok.jsonl");
    writeFileSync(path, "x".repeat(1024));
    expect(readRegularTextSync(path, options)).toBe("x".repeat(1024));
  });

  it("refuses a file one byte over the bound, naming the file and the limit", () => {
    const path = join(dir, "big.jsonl");
    writeFileSync(path, "x".repeat(1025));
    const err = thrown(() => readRegularFileSync(path, options));
    expect(err.message).toBe(`the tasks file ${path} is larger than 1 KiB, the most eddy reads`);
    expect(err.fault).toBe("user");
    const sparse = join(dir, "sparse.tape");
    writeFileSync(sparse, "");
    truncateSync(sparse, 300 * 1024 * 1024); // sparse: refused from fstat, nothing read
    expect(() =>
      readRegularFileSync(sparse, { what: "tape", maxBytes: 256 * 1024 * 1024, code: "tape_invalid" }),
    ).toThrow(/^tape .*sparse\.tape is larger than 256 MiB, the most eddy reads$/);
  });

  it("bounds a file whose size says 0 (/proc) by what it reads", () => {
    expect(readRegularTextSync("/proc/self/status", { what: "x", maxBytes: 1 << 20 })).toContain("Name:");
    expect(() => readRegularFileSync("/proc/self/status", { what: "x", maxBytes: 10 })).toThrow(
      /larger than/,
    );
  });

  it.each([
    ["/dev/zero", "a character device"],
    ["/dev/null", "a character device"],
  ])("refuses %s (%s) at once", (path, kind) => {
    expect(() => readRegularFileSync(path, options)).toThrow(
      `the tasks file ${path} is ${kind}, not a regular file: give a file`,
    );
  });

  it("refuses a FIFO without blocking, and a directory", () => {
    const fifo = join(dir, "tasks.fifo");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    expect(() => readRegularFileSync(fifo, options)).toThrow(/is a FIFO \(named pipe\), not a regular file/);
    const sub = join(dir, "sub");
    mkdirSync(sub);
    expect(() => readRegularFileSync(sub, options)).toThrow(/is a directory, not a regular file/);
  });

  it("says why a file cannot be opened, with the code given", () => {
    const err = thrown(() => readRegularFileSync(join(dir, "nope"), { ...options, code: "tape_invalid" }));
    expect(err.message).toBe(`cannot read the tasks file ${join(dir, "nope")}: ENOENT`);
    expect(err.code).toBe("tape_invalid");
  });

  it("a symlink loop the user named is said to be a loop; a symlink eddy must not follow, a symlink", () => {
    const loop = join(dir, "loop-a");
    symlinkSync(join(dir, "loop-b"), loop);
    symlinkSync(loop, join(dir, "loop-b"));
    // Before: "is a symlink, and eddy never reads its own files through one" for a path eddy follows.
    expect(thrown(() => readRegularFileSync(loop, options)).message).toBe(
      `cannot read the tasks file ${loop}: ELOOP (its symlinks lead to one another in a loop)`,
    );
    expect(thrown(() => writeRegularFileSync(loop, "x", { what: "the page" })).message).toBe(
      `cannot write the page ${loop}: ELOOP (its symlinks lead to one another in a loop)`,
    );
    expect(thrown(() => readRegularFileSync(loop, { ...options, noFollow: true })).message).toMatch(
      /is a symlink, and eddy never reads its own files through one/,
    );
  });

  it("formats sizes in MiB", () => {
    expect(sizeText(256 * 1024 * 1024)).toBe("256 MiB");
    expect(sizeText(1.5 * 1024 * 1024)).toBe("1.5 MiB");
    expect(sizeText(64 * 1024)).toBe("64 KiB");
    expect(sizeText(10)).toBe("10 bytes");
  });
});

describe("writeRegularFileSync, appendRegularFileSync", () => {
  const page = { what: "the page" };

  it("write a file whole, or add to its end, creating it when missing", () => {
    const path = join(dir, "out.txt");
    writeRegularFileSync(path, "a longer first text\n", page);
    writeRegularFileSync(path, "one\n", page);
    appendRegularFileSync(path, "two\n", page);
    appendRegularFileSync(join(dir, "new.jsonl"), new Uint8Array([0x7b, 0x7d]), page);
    expect(readFileSync(path, "utf8")).toBe("one\ntwo\n");
    expect(readFileSync(join(dir, "new.jsonl"), "utf8")).toBe("{}");
  });

  it.each([
    ["writeRegularFileSync", writeRegularFileSync],
    ["appendRegularFileSync", appendRegularFileSync],
  ])("%s refuses at once what is not a regular file, naming it", (_name, write) => {
    const fifo = join(dir, `out-${_name}.fifo`);
    spawnSync("mkfifo", [fifo]);
    // No reader: a blocking open would wait for one forever.
    expect(thrown(() => write(fifo, "x", page)).message).toBe(
      `cannot write the page ${fifo}: it is a FIFO (named pipe), not a regular file; give a file`,
    );
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      expect(thrown(() => write(fifo, "x", page)).message).toMatch(/it is a FIFO \(named pipe\)/);
    } finally {
      closeSync(reader);
    }
    expect(thrown(() => write("/dev/null", "x", page)).message).toMatch(/it is a character device/);
    const error = thrown(() => write(dir, "x", { what: "the page", code: "invalid_config" }));
    expect(error.message).toBe(`cannot write the page ${dir}: EISDIR`);
    expect(error.code).toBe("invalid_config");
    expect(thrown(() => write(join(dir, "missing", "x"), "x", page)).message).toMatch(/: ENOENT$/);
  });
});
