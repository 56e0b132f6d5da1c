import { describe, expect, it } from "vitest";
import { PROVIDER_MESSAGE_MAX_CHARS, ProviderError } from "./errors.js";

describe("ProviderError", () => {
  it("keeps a server's message and codes bounded, saying how much was cut (a 2 MB error event reached stderr whole; found by a probe)", () => {
    const huge = "x".repeat(2_000_000);
    const error = new ProviderError({
      kind: "stream_failed",
      code: "response_failed",
      message: `the provider failed the response: ${huge}`,
      retryable: false,
      providerCode: huge,
      errorType: huge,
      param: huge,
    });
    expect(error.message.length).toBeLessThan(PROVIDER_MESSAGE_MAX_CHARS + 60);
    expect(error.message).toMatch(/… \(\d+ more characters cut\)$/);
    expect(error.frameCode.length).toBeLessThan(300);
    expect(error.errorType?.length).toBeLessThan(300);
    expect((error.param as string).length).toBeLessThan(300);
  });

  it("never cuts inside a surrogate pair, and leaves a short message as it is", () => {
    // One character first: the cut falls between the two halves of an emoji.
    const message = `a${"😀".repeat(PROVIDER_MESSAGE_MAX_CHARS)}`;
    const cut = new ProviderError({ kind: "http", code: "provider_http", message, retryable: false });
    const kept = cut.message.split("…")[0] as string;
    expect(kept.length).toBe(PROVIDER_MESSAGE_MAX_CHARS - 1);
    expect(kept.endsWith("😀")).toBe(true);
    const short = new ProviderError({ kind: "http", code: "provider_http", message: "no", retryable: false });
    expect(short.message).toBe("no");
  });
});
