import picomatch from "picomatch";
import { describe, expect, it } from "vitest";
import { globMatcher } from "./common.js";

const PATHS = [
  "a.ts",
  "src/a.ts",
  "src/util/strings.test.ts",
  "src/util/deep/deeper/bottom.ts",
  ".env",
  ".config/settings.json",
  "docs/read me.md",
  "x.y+z(1)$^.txt",
  "lib",
  "lib/a",
  "a-b",
  "ab",
  "abc",
];

describe("globMatcher", () => {
  // Plain globs are matched by re2js in linear time; they must agree with picomatch (dot: true).
  it.each([
    "*.ts",
    "src/*.ts",
    "src/**",
    "src/**/*.ts",
    "**/*.ts",
    "**/deep/**/*.ts",
    "**",
    "**/**/*.json",
    "?b",
    "a?c",
    "*?",
    "?*?",
    "a*b*c",
    "*.test.*",
    "x.y+z(1)$^.txt",
    "docs/read me.md",
    "lib/**",
    "a**c",
    ".*",
    "*/*",
  ])("%s agrees with picomatch", (glob) => {
    const ours = globMatcher(glob, "list_dir");
    const theirs = glob.includes("/") ? picomatch(glob, { dot: true }) : undefined;
    const base = glob.includes("/") ? undefined : picomatch(glob, { dot: true });
    for (const path of PATHS) {
      const expected = theirs?.(path) ?? base?.(path.slice(path.lastIndexOf("/") + 1)) ?? false;
      expect(ours?.(path), `${glob} on ${path}`).toBe(expected);
    }
  });

  it("matches a crafted glob of `*?` runs at once, and correctly (it took hours on picomatch)", () => {
    const match = globMatcher(`${"*?".repeat(22)}*Q`, "list_dir");
    expect(match?.(`${"x".repeat(44)}Q`)).toBe(true);
    expect(match?.(`${"x".repeat(21)}Q`)).toBe(false);
    expect(match?.(`openai/${"x".repeat(45)}`)).toBe(false);
  });

  it("matches `*a` ×12 + `*b` against 64 a's at once (no backtracking)", () => {
    const match = globMatcher(`${"*a".repeat(12)}*b`, "list_dir");
    expect(match?.("a".repeat(64))).toBe(false);
    expect(match?.(`${"a".repeat(64)}b`)).toBe(true);
  });

  it("refuses a glob picomatch must run with more than 3 `*` wildcards, naming it", () => {
    expect(() => globMatcher(`{x,${"*a".repeat(12)}*b}`, "list_dir")).toThrow(
      /^list_dir: the glob "\{x,\*a.*" has 13 \* wildcards and uses \[ \] \{ \} \( \) ! \+ @ or \\; such a glob may have at most 3/,
    );
    expect(globMatcher("*.{ts,tsx}", "grep")?.("src/a.tsx")).toBe(true);
    expect(globMatcher("[ab].txt", "grep")?.("b.txt")).toBe(true);
  });
});
