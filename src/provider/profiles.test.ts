import { afterEach, describe, expect, it } from "vitest";
import { toSse } from "../../test/support/captures.js";
import { type RawServer, startRawServer } from "../../test/support/raw-server.js";
import type { ProviderFrame } from "../frames/frame.js";
import { GENERIC_CAPABILITIES } from "./capabilities.js";
import { createFallbackProvider } from "./fallback.js";
import { createProfileProvider } from "./http-provider.js";
import { createOpenResponsesProvider } from "./open-responses.js";
import {
  KNOWN_PROFILES,
  keyRequired,
  modelRequired,
  PROFILE_HOSTS,
  profileApiKey,
  profileBaseURL,
  profileForHost,
  resolveRoute,
} from "./profiles.js";

describe("resolveRoute", () => {
  it.each([
    [{ model: "openai/gpt-5" }, "openai", "gpt-5"],
    [{ model: "openrouter/openai/gpt-oss-20b" }, "openrouter", "openai/gpt-oss-20b"],
    [{ provider: "openrouter", model: "openai/gpt-oss-20b" }, "openrouter", "openai/gpt-oss-20b"],
    [{ provider: "openai" }, "openai", "gpt-5-mini"],
    [{ model: "lmstudio/qwen3" }, "lmstudio", "qwen3"],
  ])("%j → %s / %s", (input, profile, model) => {
    const route = resolveRoute(input);
    expect(route?.profile.name).toBe(profile);
    expect(route?.model).toBe(model);
  });

  it("leaves a model without a known profile prefix alone", () => {
    expect(resolveRoute({ model: "gpt-5" })).toBeUndefined();
    expect(resolveRoute({ model: "meta-llama/llama-3" })).toBeUndefined();
  });

  it("names the known providers when one is unknown", () => {
    expect(() => resolveRoute({ provider: "nope" })).toThrow(
      /unknown provider "nope" \(known: azure, deepseek, generic, groq, llamacpp, lmstudio, mistral, ollama, openai, openrouter, vllm\)/,
    );
  });

  it("an object's own names (toString, __proto__, constructor) are not profiles", () => {
    for (const name of ["toString", "__proto__", "constructor", "hasOwnProperty", "valueOf"]) {
      expect(() => resolveRoute({ provider: name })).toThrow(`unknown provider "${name}"`);
      expect(resolveRoute({ model: `${name}/x` })).toBeUndefined();
    }
  });
});

describe("profileForHost", () => {
  it.each([
    ["api.openai.com", "openai"],
    ["openrouter.ai", "openrouter"],
    ["my-resource.openai.azure.com", "azure"],
    ["API.OPENAI.COM", "openai"],
    ["openai.azure.com.evil.example", "generic"],
    ["localhost", "generic"],
  ])("%s → %s", (host, name) => {
    expect(profileForHost(host).name).toBe(name);
  });

  it("every host names a known profile", () => {
    for (const { profile } of PROFILE_HOSTS) expect(KNOWN_PROFILES).toHaveProperty(profile);
  });
});

describe("key and model policies", () => {
  it.each([
    ["openai", true, true],
    ["azure", true, true],
    ["openrouter", true, false],
    ["ollama", false, true],
    ["vllm", false, true],
    ["lmstudio", false, true],
    ["generic", false, true],
  ])("%s: key required %s, model required %s", (name, key, model) => {
    const profile = KNOWN_PROFILES[name];
    if (profile === undefined) throw new Error(`no ${name} profile`);
    expect([keyRequired(profile), modelRequired(profile)]).toEqual([key, model]);
  });

  it("without a policy: a key when the profile names a variable, always a model", () => {
    const base = { name: "p", baseURL: "http://h/v1", capabilities: GENERIC_CAPABILITIES, description: "" };
    expect(keyRequired({ ...base, apiKeyEnv: ["K"] })).toBe(true);
    expect(keyRequired({ ...base, apiKeyEnv: [] })).toBe(false);
    expect(modelRequired({ ...base, apiKeyEnv: [] })).toBe(true);
  });
});

describe("profiles", () => {
  it("OpenRouter cannot chain: its runs are stateless", () => {
    expect(KNOWN_PROFILES.openrouter?.capabilities.previousResponseId).toBe(false);
    expect(KNOWN_PROFILES.openai?.capabilities.previousResponseId).toBe(true);
  });

  it("reads base URL and key from the environment", () => {
    const azure = KNOWN_PROFILES.azure;
    if (azure === undefined) throw new Error("no azure profile");
    expect(profileBaseURL(azure, { AZURE_OPENAI_ENDPOINT: "https://x.openai.azure.com/" })).toBe(
      "https://x.openai.azure.com/openai/v1",
    );
    expect(() => profileBaseURL(azure, {})).toThrow(/set AZURE_OPENAI_ENDPOINT/);
    expect(profileApiKey(azure, { AZURE_OPENAI_API_KEY: "k" })).toBe("k");
  });

  let server: RawServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("sends an Azure key in its api-key header", async () => {
    server = await startRawServer([
      {
        body: [
          toSse([
            JSON.stringify({
              type: "response.completed",
              response: { id: "r", status: "completed", output: [] },
            }),
          ]),
        ],
      },
    ]);
    const azure = KNOWN_PROFILES.azure;
    if (azure === undefined) throw new Error("no azure profile");
    const provider = createProfileProvider(azure, {
      baseURL: server.url,
      env: { AZURE_OPENAI_API_KEY: "az-key" },
    });
    const stream = provider.stream({ body: { model: "m" }, turn: 0 });
    for await (const _ of stream);
    expect(server.requests[0]?.headers["api-key"]).toBe("az-key");
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
  });
});

describe("profiles: the API they speak", () => {
  it.each([
    ["llamacpp", "http://localhost:8080/v1", "LLAMA_API_KEY"],
    ["groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY"],
    ["deepseek", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"],
    ["mistral", "https://api.mistral.ai/v1", "MISTRAL_API_KEY"],
  ])("%s speaks Chat Completions at %s with %s, stateless", (name, url, keyEnv) => {
    const profile = KNOWN_PROFILES[name];
    expect(profile).toMatchObject({ api: "chat-completions", baseURL: url, apiKeyEnv: [keyEnv] });
    expect(profile?.capabilities).toMatchObject({ previousResponseId: false, encryptedReasoning: false });
  });

  it.each(["openai", "azure", "openrouter", "ollama", "vllm", "lmstudio", "generic"])(
    "%s speaks Open Responses by default",
    (name) => {
      expect(KNOWN_PROFILES[name]?.api ?? "responses").toBe("responses");
    },
  );

  let server: RawServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const chatReply = {
    body: [
      `data: ${JSON.stringify({ id: "c", choices: [{ index: 0, delta: { content: "ok" }, finish_reason: "stop" }] })}\n\n`,
      "data: [DONE]\n\n",
    ],
  };

  async function sendThrough(provider: ReturnType<typeof createProfileProvider>) {
    const stream = provider.stream({ body: { model: "m", input: "hi", max_output_tokens: 9 }, turn: 0 });
    for await (const _ of stream);
    return stream.result;
  }

  it("a Chat Completions profile builds the Chat Completions provider with its dialect", async () => {
    server = await startRawServer([chatReply]);
    const groq = KNOWN_PROFILES.groq;
    if (groq === undefined) throw new Error("no groq profile");
    const provider = createProfileProvider(groq, { baseURL: server.url, env: { GROQ_API_KEY: "gsk-test" } });
    expect(provider.wire?.api).toBe("chat-completions");
    expect(provider.capabilities.previousResponseId).toBe(false);
    const outcome = await sendThrough(provider);
    expect(outcome.ok && outcome.response.outputText).toBe("ok");
    expect(server.requests[0]?.url).toBe("/v1/chat/completions");
    expect(server.requests[0]?.headers.authorization).toBe("Bearer gsk-test");
    const body = JSON.parse(server.requests[0]?.body ?? "{}");
    expect(body.max_completion_tokens).toBe(9);
    expect(body).not.toHaveProperty("stream_options");
  });

  it("a server that speaks both APIs follows the api option", async () => {
    const ollama = KNOWN_PROFILES.ollama;
    if (ollama === undefined) throw new Error("no ollama profile");
    server = await startRawServer([chatReply]);
    const chat = createProfileProvider(ollama, { baseURL: server.url, api: "chat-completions" });
    expect(chat.capabilities.previousResponseId).toBe(false);
    expect((await sendThrough(chat)).ok).toBe(true);
    expect(server.requests[0]?.url).toBe("/v1/chat/completions");
    const responses = createProfileProvider(ollama, { baseURL: server.url });
    expect(responses.wire).toBeUndefined();
    await sendThrough(responses);
    expect(server.requests[1]?.url).toBe("/v1/responses");
  });
});

describe("createFallbackProvider", () => {
  let a: RawServer | undefined;
  let b: RawServer | undefined;
  afterEach(async () => {
    await a?.close();
    await b?.close();
  });

  it("tries the next candidate on a provider error before any output", async () => {
    a = await startRawServer([{ status: 503, body: ["down"] }]);
    b = await startRawServer([
      {
        body: [
          toSse([
            JSON.stringify({
              type: "response.completed",
              response: { id: "r2", status: "completed", output: [] },
            }),
          ]),
        ],
      },
    ]);
    const noSleep = { sleep: async () => {}, retry: { maxRetries: 1 } };
    const provider = createFallbackProvider([
      { provider: createOpenResponsesProvider({ baseURL: a.url, name: "primary", ...noSleep }) },
      {
        provider: createOpenResponsesProvider({ baseURL: b.url, name: "backup", ...noSleep }),
        model: "backup-model",
      },
    ]);
    const stream = provider.stream({ body: { model: "m" }, turn: 0 });
    const frames: ProviderFrame[] = [];
    for await (const f of stream) frames.push(f);
    const outcome = await stream.result;
    expect(outcome.ok).toBe(true);
    const starts = frames.filter((f) => f.type === "request_started");
    expect(starts.map((f) => f.type === "request_started" && [f.attempt, f.body.model])).toEqual([
      [1, "m"],
      [2, "m"],
      [3, "backup-model"],
    ]);
    expect(frames.find((f) => f.type === "retry" && f.reason === "fallback:backup")).toBeDefined();
  });

  it("does not fall back on an invalid request", async () => {
    a = await startRawServer([{ status: 400, body: ['{"error":{"message":"bad"}}'] }]);
    b = await startRawServer([{ body: [""] }]);
    const provider = createFallbackProvider([
      { provider: createOpenResponsesProvider({ baseURL: a.url }) },
      { provider: createOpenResponsesProvider({ baseURL: b.url }) },
    ]);
    const stream = provider.stream({ body: { model: "m" }, turn: 0 });
    for await (const _ of stream);
    expect((await stream.result).ok).toBe(false);
    expect(b.requests).toHaveLength(0);
  });
});
