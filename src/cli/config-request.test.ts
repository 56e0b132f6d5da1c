import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveConfig } from "./config.js";

function resolveWith(file: unknown, flags: Record<string, unknown> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "eddy-cfg17-"));
  writeFileSync(join(dir, "eddy.config.json"), JSON.stringify(file));
  return resolveConfig({ workspace: dir, ...flags }, { HOME: dir, EDDY_TRUST_CONFIG: "1" }, dir);
}

describe("request options, native and hosted tools in the configuration", () => {
  it("a profile's request defaults apply unless the file or a flag sets the option", () => {
    const config = resolveWith(
      {
        provider: "lab",
        profiles: {
          lab: { base_url: "http://127.0.0.1:9/v1", request: { reasoning_effort: "low", temperature: 0.2 } },
        },
        temperature: 0.7,
      },
      { reasoningEffort: "high" },
    );
    expect(config.request.value).toEqual({ reasoning: { effort: "high" }, temperature: 0.7 });
    expect(config.request.source).toBe("flag");
    const defaults = resolveWith({
      provider: "lab",
      profiles: { lab: { base_url: "http://127.0.0.1:9/v1", request: { reasoning_summary: "auto" } } },
    });
    expect(defaults.request).toMatchObject({
      value: { reasoning: { summary: "auto" } },
      source: "profile",
      from: "lab",
    });
  });

  it("a bad value names where it was written and the allowed values", () => {
    expect(() =>
      resolveWith({
        profiles: { lab: { base_url: "http://x/v1", request: { verbosity: "loud" } } },
        provider: "lab",
      }),
    ).toThrow(/profile lab: request.verbosity must be one of low, medium, high \(got "loud"\)/);
    expect(() => resolveWith({ include: ["reasoning.encrypted_content", "everything"] })).toThrow(
      /config file .*: include must be one of reasoning.encrypted_content, message.output_text.logprobs \(got "everything"\)/,
    );
    expect(() => resolveWith({ max_output_tokens: 8 })).toThrow(/max_output_tokens must be an integer ≥ 16/);
  });

  it("native_tools, tools and continue_incomplete from the file; --tool replaces the file's list", () => {
    const config = resolveWith({
      native_tools: true,
      tools: ["web_search", "file_search:vs_1,vs_2", "mcp:docs=https://example.com/mcp"],
      continue_incomplete: true,
    });
    expect(config.nativeTools).toMatchObject({ value: true, source: "config" });
    expect(config.continueIncomplete.value).toBe(true);
    expect(config.hostedTools.value).toEqual([
      { type: "web_search" },
      { type: "file_search", vector_store_ids: ["vs_1", "vs_2"] },
      { type: "mcp", server_label: "docs", server_url: "https://example.com/mcp" },
    ]);
    const flagged = resolveWith({ tools: ["web_search"] }, { tool: ["code_interpreter"] });
    expect(flagged.hostedTools.value).toEqual([{ type: "code_interpreter", container: { type: "auto" } }]);
    expect(() => resolveWith({ tools: ["telepathy"] })).toThrow(
      /config file .*: tools: --tool: unknown hosted tool "telepathy"/,
    );
  });

  it("native tools default to the provider's capability (unset)", () => {
    expect(resolveWith({}).nativeTools).toEqual({ value: undefined, source: "default" });
  });
});
