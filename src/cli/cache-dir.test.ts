import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { eddyCacheDir } from "./cache-dir.js";

describe("eddy's cache directory", () => {
  it("is XDG_CACHE_HOME/eddy, else ~/.cache/eddy, else none", () => {
    expect(eddyCacheDir({ XDG_CACHE_HOME: "/x", HOME: "/h" })).toBe(join("/x", "eddy"));
    expect(eddyCacheDir({ HOME: "/h" })).toBe(join("/h", ".cache", "eddy"));
    expect(eddyCacheDir({ USERPROFILE: "/u" })).toBe(join("/u", ".cache", "eddy"));
    expect(eddyCacheDir({})).toBeUndefined();
  });

  it("ignores relative and empty paths, as the XDG specification asks", () => {
    expect(eddyCacheDir({ XDG_CACHE_HOME: "cache", HOME: "/h" })).toBe(join("/h", ".cache", "eddy"));
    expect(eddyCacheDir({ XDG_CACHE_HOME: "", HOME: "" })).toBeUndefined();
    expect(eddyCacheDir({ HOME: "../h" })).toBeUndefined();
  });
});
