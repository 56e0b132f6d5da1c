/**
 * The build's input digest (scripts/build-inputs.mjs): the suite's global setup skips the build
 * only when dist/ was built from exactly today's sources, so it must change with every input the
 * build reads and with nothing else.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildInputsDigest, builtDigest, STAMP } from "../scripts/build-inputs.mjs";

const root = mkdtempSync(join(tmpdir(), "eddy-build-inputs-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function write(path: string, text: string): void {
  mkdirSync(join(root, path, ".."), { recursive: true });
  writeFileSync(join(root, path), text);
}

describe("the build's input digest", () => {
  it("changes with a source, a config or the lockfile, and not with a test file", () => {
    write("src/a.ts", "export const a = 1;\n");
    write("src/deep/b.ts", "export const b = 2;\n");
    write("src/deep/b.test.ts", "// a test\n");
    write("package-lock.json", "{}\n");
    const first = buildInputsDigest(root);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(buildInputsDigest(root)).toBe(first);

    write("src/deep/b.test.ts", "// a test, edited\n");
    expect(buildInputsDigest(root)).toBe(first);

    write("src/deep/b.ts", "export const b = 3;\n");
    const second = buildInputsDigest(root);
    expect(second).not.toBe(first);

    write("src/deep/c.ts", "");
    const third = buildInputsDigest(root);
    expect(third).not.toBe(second);

    write("package-lock.json", '{"lockfileVersion":3}\n');
    const fourth = buildInputsDigest(root);
    expect(fourth).not.toBe(third);

    write("tsconfig.build.json", "{}\n");
    expect(buildInputsDigest(root)).not.toBe(fourth);
  });

  it("moving content from one file to another changes it (paths are part of the digest)", () => {
    const other = mkdtempSync(join(tmpdir(), "eddy-build-inputs-"));
    try {
      mkdirSync(join(other, "src"));
      writeFileSync(join(other, "src/x.ts"), "1");
      writeFileSync(join(other, "src/y.ts"), "");
      const before = buildInputsDigest(other);
      writeFileSync(join(other, "src/x.ts"), "");
      writeFileSync(join(other, "src/y.ts"), "1");
      expect(buildInputsDigest(other)).not.toBe(before);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it("reads no stamp where no build succeeded", () => {
    expect(builtDigest(root)).toBeUndefined();
    write(STAMP, "abc\n");
    expect(builtDigest(root)).toBe("abc");
  });
});
