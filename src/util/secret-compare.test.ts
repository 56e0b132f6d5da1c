import { describe, expect, it } from "vitest";
import { sameSecret } from "./secret-compare.js";

describe("sameSecret", () => {
  it("is true only for the same text, whatever the lengths", () => {
    expect(sameSecret("serve-token-1234", "serve-token-1234")).toBe(true);
    expect(sameSecret("serve-token-1235", "serve-token-1234")).toBe(false);
    expect(sameSecret("serve-token-123", "serve-token-1234")).toBe(false);
    expect(sameSecret("", "serve-token-1234")).toBe(false);
    expect(sameSecret("sérve-token-1234", "serve-token-1234")).toBe(false);
  });
});
