/**
 * Interop: `eddy mock --strict` (the built CLI, a real process on 127.0.0.1) refuses the short
 * message form the AI SDK and the Agents SDK send with a 400 that names `input[0].type`, and
 * still serves a client that sends the spec's canonical form.
 */
import { createOpenAI } from "@ai-sdk/openai";
import { Agent, OpenAIProvider, Runner, setTracingDisabled } from "@openai/agents";
import { APICallError, generateText } from "ai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stopAgentsTracingAfterAll } from "../support/agents-tracing.js";
import { type CliProcess, startCli, until } from "../support/cli-process.js";

// The SDK's trace export loop would outlive this file in its worker (docs/pitfalls.md #118).
stopAgentsTracingAfterAll();

/** The strict server under test (`eddy serve --strict` will take the same suite). */
const STRICT_COMMAND = ["mock", "--port", "0", "--strict"];

let server: CliProcess;
let baseURL: string;
beforeAll(async () => {
  setTracingDisabled(true);
  server = startCli(STRICT_COMMAND);
  await until(() => server.stderr.includes("Ctrl-C stops it"), "eddy mock --strict to listen");
  baseURL = server.stdout.trim();
});
afterAll(async () => {
  server.child.kill("SIGINT");
  await server.exited;
});

describe("eddy mock --strict", () => {
  it("says it is strict, and refuses the AI SDK's short message form with a 400 naming input[0].type", async () => {
    expect(server.stderr).toContain(", strict;");
    const provider = createOpenAI({ baseURL, apiKey: "interop" });
    const error = await generateText({
      model: provider.responses("demo"),
      prompt: "hello",
      maxRetries: 0,
    }).catch((e: unknown) => e);
    expect(APICallError.isInstance(error)).toBe(true);
    const call = error as APICallError;
    expect(call.statusCode).toBe(400);
    expect(JSON.parse(call.responseBody ?? "{}")).toMatchObject({
      error: { param: "input[0].type", code: "missing_required_parameter" },
    });
    expect(call.message).toMatch(/^input\[0\]\.type is required \(--strict\)/);
  });

  it("refuses the Agents SDK's first request the same way", async () => {
    const client = new OpenAI({ baseURL, apiKey: "interop", maxRetries: 0 });
    const runner = new Runner({
      modelProvider: new OpenAIProvider({ openAIClient: client }),
      tracingDisabled: true,
    });
    const error = await runner.run(new Agent({ name: "a", model: "demo" }), "hello").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("input[0].type");
  });

  it("serves the canonical form", async () => {
    const client = new OpenAI({ baseURL, apiKey: "interop", maxRetries: 0 });
    const response = await client.responses.create({
      model: "demo",
      input: [{ type: "message", role: "user", content: "My name is Ada." }],
    });
    expect(response.output_text).toContain("Ada");
  });
});
