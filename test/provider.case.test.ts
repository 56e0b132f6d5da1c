/**
 * The provider conformance suite: one set of cases that every implementation of the provider
 * contract (src/provider/provider.ts) must pass, run against each provider in `SUBJECTS` — the way
 * Hono runs one router suite over every router. A provider that cannot meet a case lists it in
 * `skip` with its reason.
 *
 * Every subject answers like the mock server playing a scenario (src/mock/scenario.ts), so one
 * scenario drives all of them: the HTTP provider over node:http and over fetch, a fallback chain
 * whose first candidate is a dead port, and the replay provider playing a tape recorded from the
 * HTTP provider; the same three for the Chat Completions provider, whose server plays the same
 * scenario as chat chunks. New providers (WebSocket) add a subject here, or call
 * `runProviderConformance` from their own test file.
 */

import { afterEach, describe, expect, it } from "vitest";
import { DERIVED_FRAME_TYPES, type Frame, type ProviderFrame } from "../src/frames/frame.js";
import { createMockServer, type MockServer, type Scenario } from "../src/mock/index.js";
import type { AssembledCall } from "../src/provider/assembler/index.js";
import { createChatCompletionsProvider } from "../src/provider/chat-completions/provider.js";
import { createFallbackProvider } from "../src/provider/fallback.js";
import {
  createOpenResponsesProvider,
  type OpenResponsesProviderOptions,
} from "../src/provider/open-responses.js";
import type {
  Provider,
  ProviderOutcome,
  ProviderRequest,
  ProviderStreamOptions,
} from "../src/provider/provider.js";
import { createFrameGate } from "../src/replay/gate.js";
import { createReplayProvider } from "../src/replay/replay-provider.js";
import type { Tape, TapeHeader } from "../src/replay/tape.js";
import { startChatServer } from "./support/chat-server.js";
import { deadPort } from "./support/dead-port.js";

/** What one request through a subject produced. */
export interface Exchange {
  /** The frames, in order, with `{call}` markers where `onCall` was invoked. */
  log: (ProviderFrame | { call: AssembledCall })[];
  frames: ProviderFrame[];
  calls: AssembledCall[];
  outcome: ProviderOutcome;
}

/** How the harness takes part in a request (the options the provider gets, minus onCall). */
export interface Drive {
  options?: Omit<ProviderStreamOptions, "onCall" | "signal">;
  /** Abort the request when this frame is taken. */
  abortWhen?: (frame: ProviderFrame) => boolean;
  /** Stop iterating (break) when this frame is taken. */
  breakWhen?: (frame: ProviderFrame) => boolean;
  /** Do not pass `onCall`. */
  noOnCall?: boolean;
}

/** A provider under test, started per case. */
export interface ProviderSubject {
  name: string;
  /** Starts the subject answering `scenario`; returns how to send one request through it. */
  start(
    scenario: Scenario,
  ): Promise<{ send(request: ProviderRequest, drive: Drive): Promise<Exchange>; close(): Promise<void> }>;
  /** Cases this subject does not meet, each with the reason. */
  skip?: Record<string, string>;
  /**
   * Whether a frame is one that completes a function call in this subject's wire format.
   * @defaultValue an Open Responses `response.output_item.done` event
   */
  completesCall?: (frame: ProviderFrame) => boolean;
}

const BODY = { model: "m", input: "hi", stream: true } as ProviderRequest["body"];
const request = (extra: Partial<ProviderRequest> = {}): ProviderRequest => ({
  body: BODY,
  turn: 0,
  ...extra,
});
const FAST: Partial<OpenResponsesProviderOptions> = {
  retry: { initialBackoffMs: 1, maxBackoffMs: 2 },
  timeouts: { connectMs: 5_000, firstByteMs: 5_000, idleMs: 5_000, drainMs: 500 },
};

/** Iterates a provider stream the way the loop does, recording frames and call markers. */
async function drive(
  provider: Provider,
  req: ProviderRequest,
  d: Drive,
  observe?: (f: Frame) => void,
): Promise<Exchange> {
  const controller = new AbortController();
  const log: Exchange["log"] = [];
  const calls: AssembledCall[] = [];
  const options: ProviderStreamOptions = { ...d.options, signal: controller.signal };
  if (d.noOnCall !== true)
    options.onCall = (call) => {
      calls.push(call);
      log.push({ call });
    };
  const stream = provider.stream(req, options);
  let seq = 0;
  for await (const f of stream) {
    (f as Frame).seq = seq++;
    log.push(f);
    observe?.(f);
    if (d.abortWhen?.(f)) controller.abort("test");
    if (d.breakWhen?.(f)) break;
  }
  const outcome = await stream.result;
  return { log, calls, outcome, frames: log.filter((e): e is ProviderFrame => !("call" in e)) };
}

async function mockFor(scenario: Scenario): Promise<MockServer> {
  return createMockServer({ scenario });
}

/** A port nothing listens on. */
function httpSubject(name: string, extra: Partial<OpenResponsesProviderOptions>): ProviderSubject {
  return {
    name,
    async start(scenario) {
      const mock = await mockFor(scenario);
      const provider = createOpenResponsesProvider({ baseURL: mock.url, ...FAST, ...extra });
      return { send: (req, d) => drive(provider, req, d), close: () => mock.close() };
    },
  };
}

const fallbackSubject: ProviderSubject = {
  name: "fallback (dead port → mock)",
  async start(scenario) {
    const mock = await mockFor(scenario);
    const port = await deadPort();
    const dead = createOpenResponsesProvider({
      baseURL: `http://127.0.0.1:${port.port}/v1`,
      name: "dead",
      ...FAST,
      retry: { maxRetries: 0 },
    });
    const live = createOpenResponsesProvider({ baseURL: mock.url, name: "mock", ...FAST });
    const provider = createFallbackProvider([{ provider: dead }, { provider: live }]);
    return {
      send: (req, d) => drive(provider, req, d),
      close: async () => {
        await Promise.all([mock.close(), port.close()]);
      },
    };
  },
};

/** Records the request through the HTTP provider, then plays the tape through the replay provider. */
const replaySubject: ProviderSubject = {
  name: "replay (of an HTTP recording)",
  async start(scenario) {
    const mock = await mockFor(scenario);
    const live = createOpenResponsesProvider({ baseURL: mock.url, ...FAST });
    return {
      async send(req, d) {
        const recorded = await drive(live, req, d);
        const tape: Tape = {
          header: { provider: { validate: true } } as unknown as TapeHeader,
          frames: recorded.frames,
        };
        const gate = createFrameGate({ stallMs: 1_000 });
        const replay = createReplayProvider(tape, gate, live.capabilities);
        return drive(replay, req, d, gate.observer);
      },
      close: () => mock.close(),
    };
  },
};

/**
 * A Chat Completions server playing `scenario`: the scripted one of test/support/chat-server.ts.
 * Once the mock server answers `POST /v1/chat/completions` from scenarios, this line becomes
 * `return createMockServer({ scenario });`.
 */
async function chatServerFor(scenario: Scenario): Promise<{ url: string; close(): Promise<void> }> {
  return startChatServer(scenario);
}

/** A chat chunk completes a call when it starts the next call (a fragment with an id) or finishes the choice. */
function chatCompletesCall(f: ProviderFrame): boolean {
  if (f.type !== "provider_event") return false;
  const choice = (
    f.data as { choices?: { delta?: { tool_calls?: { id?: string }[] }; finish_reason?: unknown }[] }
  )?.choices?.[0];
  return (
    typeof choice?.finish_reason === "string" ||
    (choice?.delta?.tool_calls ?? []).some((c) => c.id !== undefined)
  );
}

const chatSubject: ProviderSubject = {
  name: "chat-completions (node:http)",
  completesCall: chatCompletesCall,
  async start(scenario) {
    const server = await chatServerFor(scenario);
    const provider = createChatCompletionsProvider({ baseURL: server.url, ...FAST });
    return { send: (req, d) => drive(provider, req, d), close: () => server.close() };
  },
};

const chatFallbackSubject: ProviderSubject = {
  name: "fallback (dead Responses port → chat-completions)",
  completesCall: chatCompletesCall,
  async start(scenario) {
    const server = await chatServerFor(scenario);
    const port = await deadPort();
    const dead = createOpenResponsesProvider({
      baseURL: `http://127.0.0.1:${port.port}/v1`,
      name: "dead",
      ...FAST,
      retry: { maxRetries: 0 },
    });
    const live = createChatCompletionsProvider({ baseURL: server.url, name: "chat", ...FAST });
    const provider = createFallbackProvider([{ provider: dead }, { provider: live }]);
    return {
      send: (req, d) => drive(provider, req, d),
      close: async () => {
        await Promise.all([server.close(), port.close()]);
      },
    };
  },
};

/** Records through the Chat Completions provider, then replays with the API named in the header. */
const chatReplaySubject: ProviderSubject = {
  name: "replay (of a chat-completions recording)",
  completesCall: chatCompletesCall,
  async start(scenario) {
    const server = await chatServerFor(scenario);
    const live = createChatCompletionsProvider({ baseURL: server.url, ...FAST });
    return {
      async send(req, d) {
        const recorded = await drive(live, req, d);
        const header = { provider: { validate: true, wire: live.wire } } as unknown as TapeHeader;
        const gate = createFrameGate({ stallMs: 1_000 });
        const replay = createReplayProvider({ header, frames: recorded.frames }, gate, live.capabilities);
        return drive(replay, req, d, gate.observer);
      },
      close: () => server.close(),
    };
  },
};

export const SUBJECTS: ProviderSubject[] = [
  httpSubject("http (node:http)", {}),
  httpSubject("http (fetch)", { fetch: globalThis.fetch }),
  fallbackSubject,
  replaySubject,
  chatSubject,
  chatFallbackSubject,
  chatReplaySubject,
];

/** Frames derived from a provider event, right after it. */
const DERIVED: ReadonlySet<string> = new Set(["output_text_delta", ...DERIVED_FRAME_TYPES]);

const responsesCompletesCall = (f: ProviderFrame) => eventType(f) === "response.output_item.done";

const eventType = (f: ProviderFrame): unknown =>
  f.type === "provider_event" && f.data !== null && typeof f.data === "object"
    ? (f.data as { type?: unknown }).type
    : undefined;
const attempts = (frames: ProviderFrame[]) => frames.filter((f) => f.type === "request_started");
const text = (frames: ProviderFrame[]) =>
  frames.map((f) => (f.type === "output_text_delta" ? f.delta : "")).join("");

interface Case {
  name: string;
  scenario: Scenario;
  request?: Partial<ProviderRequest>;
  drive?: Drive;
  check(exchange: Exchange, subject: ProviderSubject): void;
}

const CASES: Case[] = [
  {
    name: "streams a text answer and settles ok",
    scenario: { turns: [{ items: [{ type: "message", text: "Hello there, friend." }] }] },
    check({ frames, outcome, calls }) {
      const last = attempts(frames).at(-1);
      expect(last?.body).toEqual(BODY);
      expect(text(frames)).toBe("Hello there, friend.");
      expect(frames.filter((f) => f.type === "provider_event").every((f) => f.turn === 0)).toBe(true);
      expect(outcome.ok).toBe(true);
      expect(outcome.response.outputText).toBe("Hello there, friend.");
      expect(outcome.response.terminal).toBe("completed");
      expect(calls).toEqual([]);
    },
  },
  {
    name: "hands each call to onCall right after the frame that completed it, in completion order",
    scenario: {
      turns: [
        {
          items: [
            { type: "function_call", name: "a", arguments: { x: 1 }, call_id: "call_a" },
            { type: "function_call", name: "b", arguments: { y: 2 }, call_id: "call_b" },
          ],
          ignoreToolChoice: true,
        },
      ],
    },
    check({ log, calls, outcome }, subject) {
      expect(calls.map((c) => [c.callId, c.name, c.arguments])).toEqual([
        ["call_a", "a", '{"x":1}'],
        ["call_b", "b", '{"y":2}'],
      ]);
      const completesCall = subject.completesCall ?? responsesCompletesCall;
      for (const call of calls) {
        // Right after the event that completed it and the frames derived from that event.
        let at = log.findIndex((e) => "call" in e && e.call === call) - 1;
        expect(DERIVED.has((log[at] as ProviderFrame).type)).toBe(true);
        while (at > 0 && DERIVED.has((log[at] as ProviderFrame).type)) at--;
        const before = log[at] as ProviderFrame;
        expect(completesCall(before), JSON.stringify(before)).toBe(true);
      }
      expect(outcome.ok && outcome.response.calls.map((c) => c.callId)).toEqual(["call_a", "call_b"]);
    },
  },
  {
    name: "without onCall, the calls are in the result",
    scenario: { turns: [{ items: [{ type: "function_call", name: "a", call_id: "call_a" }] }] },
    drive: { noOnCall: true },
    check({ outcome }) {
      expect(outcome.ok && outcome.response.calls.map((c) => c.name)).toEqual(["a"]);
    },
  },
  {
    name: "retries a failure that comes before any output",
    scenario: {
      turns: [
        { faults: { httpError: { status: 500, headers: { "retry-after-ms": "1" } } } },
        { items: [{ type: "message", text: "second time lucky" }] },
      ],
    },
    check({ frames, outcome }) {
      const failed = frames.filter((f) => f.type === "request_failed").at(-1);
      expect(failed).toMatchObject({ status: 500, retryable: true });
      const retry = frames.filter((f) => f.type === "retry").at(-1);
      expect(retry).toMatchObject({ reason: "server_error", delay_ms: 1 });
      expect(attempts(frames).at(-1)?.attempt).toBe(retry?.type === "retry" ? retry.attempt : -1);
      expect(outcome.ok).toBe(true);
      expect(text(frames)).toBe("second time lucky");
    },
  },
  {
    name: "does not re-send when the caller says a tool ran",
    scenario: {
      turns: [{ faults: { httpError: { status: 500 } } }, { items: [{ type: "message", text: "never" }] }],
    },
    drive: { options: { canRetry: () => false } },
    check({ frames, outcome }) {
      expect(frames.some((f) => f.type === "retry")).toBe(false);
      expect(outcome.ok).toBe(false);
      expect(frames.at(-1)?.type).toBe("request_failed");
    },
  },
  {
    name: "does not retry once a call was complete",
    scenario: {
      turns: [
        { items: [{ type: "function_call", name: "a", call_id: "call_a" }], faults: { dropAfterEvents: 6 } },
        { items: [{ type: "message", text: "never" }] },
      ],
    },
    check({ frames, outcome, calls }) {
      expect(calls.map((c) => c.callId)).toEqual(["call_a"]);
      expect(frames.some((f) => f.type === "retry" && !f.reason.startsWith("fallback"))).toBe(false);
      expect(outcome.ok).toBe(false);
      // The dropped connection is a retryable failure in itself; the complete call forbids the retry.
      expect(!outcome.ok && outcome.error.retryable).toBe(true);
    },
  },
  {
    name: "a failed response is an error outcome that ends the run `failed`",
    scenario: {
      turns: [
        {
          items: [{ type: "message", text: "so far" }],
          status: "failed",
          error: { code: "invalid_prompt", message: "no" },
        },
      ],
    },
    check({ frames, outcome }) {
      expect(outcome.ok).toBe(false);
      if (outcome.ok) return;
      expect(outcome.error.kind).toBe("stream_failed");
      expect(outcome.error.runEndReason).toBe("failed");
      expect(outcome.error.frameCode).toBe("invalid_prompt");
      expect(outcome.response.outputText).toBe("so far");
      expect(frames.at(-1)).toMatchObject({
        type: "request_failed",
        code: "invalid_prompt",
        retryable: false,
      });
    },
  },
  {
    name: "an incomplete response is a usable outcome",
    scenario: { turns: [{ items: [{ type: "message", text: "cut" }], status: "incomplete" }] },
    check({ outcome }) {
      expect(outcome.ok).toBe(true);
      expect(outcome.response.terminal).toBe("incomplete");
      expect(outcome.response.incompleteReason).toBe("max_output_tokens");
    },
  },
  {
    name: "numbers attempts from firstAttempt",
    scenario: { turns: [{ items: [{ type: "message", text: "ok" }] }] },
    request: { firstAttempt: 3, turn: 4 },
    check({ frames }) {
      expect(attempts(frames)[0]?.attempt).toBe(3);
      expect(frames.every((f) => f.turn === 4)).toBe(true);
    },
  },
  {
    name: "an aborted request settles cancelled and the iteration ends without throwing",
    scenario: {
      turns: [
        {
          items: [{ type: "message", text: "a long answer that stalls" }],
          faults: { stallAfterEvents: { afterEvents: 3, ms: 10_000 } },
        },
      ],
    },
    drive: { abortWhen: (f) => f.type === "provider_event" },
    check({ frames, outcome }) {
      expect(outcome.ok).toBe(false);
      expect(!outcome.ok && outcome.error.kind).toBe("cancelled");
      expect(frames.at(-1)).toMatchObject({ type: "request_failed", kind: "cancelled" });
    },
  },
  {
    name: "stopping the iteration early settles the result cancelled",
    scenario: { turns: [{ items: [{ type: "message", text: "one two three four five" }] }] },
    drive: { breakWhen: (f) => f.type === "output_text_delta" },
    check({ outcome }) {
      expect(outcome.ok).toBe(false);
      expect(!outcome.ok && outcome.error.kind).toBe("cancelled");
    },
  },
];

/** Runs every case against `subject`. */
export function runProviderConformance(subject: ProviderSubject): void {
  describe(`provider conformance: ${subject.name}`, () => {
    let close: (() => Promise<void>) | undefined;
    afterEach(async () => {
      await close?.();
      close = undefined;
    });
    for (const c of CASES) {
      const reason = subject.skip?.[c.name];
      // A listed deviation is shown as skipped, with its reason in the name.
      (reason === undefined ? it : it.skip)(
        reason === undefined ? c.name : `${c.name} (skipped: ${reason})`,
        async () => {
          const started = await subject.start(c.scenario);
          close = started.close;
          c.check(await started.send(request(c.request), c.drive ?? {}), subject);
        },
      );
    }
  });
}

for (const subject of SUBJECTS) runProviderConformance(subject);
