/**
 * Scenario types: a script of what the "model" answers, one turn per `POST /responses`.
 *
 * Naming rule: fields that mirror an Open Responses field keep its wire name (`call_id`,
 * `arguments`, `encrypted_content`, `phase`, `summary`, usage's `input_tokens`); options the mock
 * adds are camelCase (`rawEvents`, `ignoreToolChoice`, `incompleteReason`, `expect`, `faults`).
 *
 * ```yaml
 * name: read package.json
 * turns:
 *   - expect: { inputContains: package.json, tools: [read_file] }
 *     items:
 *       - { type: reasoning, summary: [Looking at the manifest.], encrypted_content: enc_1 }
 *       - { type: function_call, name: read_file, arguments: { path: package.json }, call_id: call_1 }
 *   - expect: { functionCallOutputs: call_1, previousResponseId: true }
 *     items:
 *       - { type: message, text: "It is the eddy package, version 0.1.0.", phase: final_answer }
 *   - faults: { httpError: { status: 429, headers: { retry-after-ms: "20" } } }
 *   - { items: [{ type: message, text: "…and so on" }], status: incomplete, repeat: true }
 * ```
 */
import type { JsonObject } from "../protocol/types.js";
import type { MockFaults } from "./faults.js";
import type { PlannedStatus, UsageOverrides } from "./plan.js";

/** An assistant message. Give `text`, `refusal`, or both (text parts come first). */
export interface ScenarioMessageItem {
  type: "message";
  /** The text; an array makes one `output_text` part per entry. */
  text?: string | string[];
  /** A refusal part. */
  refusal?: string;
  /** The assistant message `phase` (spec 2026-04-24). */
  phase?: "commentary" | "final_answer";
  /** Fixed item id. @defaultValue the next `msg_<prefix>_NNNN` */
  id?: string;
}

/** A function call. */
export interface ScenarioFunctionCallItem {
  type: "function_call";
  name: string;
  /**
   * The arguments: a string is sent verbatim (make it invalid JSON to test the client), an object
   * is JSON-encoded.
   * @defaultValue "{}"
   */
  arguments?: string | Record<string, unknown>;
  /** Fixed call id (so a later turn can expect its output). @defaultValue the next `call_<prefix>_NNNN` */
  call_id?: string;
  /** Fixed item id. @defaultValue the next `fc_<prefix>_NNNN` */
  id?: string;
}

/** A reasoning item. */
export interface ScenarioReasoningItem {
  type: "reasoning";
  /** Summary texts, one summary part each. */
  summary?: string | string[];
  /** Raw reasoning texts (`reasoning_text` content, streamed with `response.reasoning.delta`). */
  content?: string | string[];
  /** Opaque state; sent only when the request has `include: ["reasoning.encrypted_content"]`. */
  encrypted_content?: string;
  /** Fixed item id. @defaultValue the next `rs_<prefix>_NNNN` */
  id?: string;
}

/** One scripted output item. */
export type ScenarioItem = ScenarioMessageItem | ScenarioFunctionCallItem | ScenarioReasoningItem;

/**
 * What a turn expects of its request. Any mismatch answers HTTP 400 with code `scenario_mismatch`
 * and a message saying what was expected and what came (the turn is used up either way).
 */
export interface ScenarioExpect {
  /** `true`: the request must have a `previous_response_id`; `false`: it must not; a string: exactly that id. */
  previousResponseId?: boolean | string;
  /** Each call id must have a `function_call_output` in the request's own `input`. */
  functionCallOutputs?: string | string[];
  /** Each text must occur in the request's own `input` (message texts and tool outputs). */
  inputContains?: string | string[];
  /**
   * Each text must occur in what the model sees: the chain of `previous_response_id` (its inputs
   * and outputs), then the request's `input`, with compaction items expanded to the history they
   * stand for.
   */
  contextContains?: string | string[];
  /** Each tool name must be offered in `tools`. */
  tools?: string[];
  /** The `instructions` must contain this text. */
  instructionsContains?: string;
  /** A subset of the request body as sent (a chat body on `/chat/completions`) that must match (objects by key, arrays element by element). */
  body?: JsonObject;
}

/** One turn: the answer to one `POST /responses`. */
export interface ScenarioTurn {
  /** A name for messages and logs. */
  label?: string;
  /** The output items, in order. */
  items?: ScenarioItem[];
  /**
   * How the response ends. `incomplete`: the last item ends `incomplete` and the response is
   * `response.incomplete`; `failed`: all items stream, then `response.failed` with `error`.
   * @defaultValue "completed"
   */
  status?: PlannedStatus;
  /** `incomplete_details.reason`. @defaultValue "max_output_tokens" */
  incompleteReason?: string;
  /** `response.error` of a `failed` turn. @defaultValue `{code: "server_error", message: …}` */
  error?: { code: string; message: string };
  /** Reported token counts (the rest is estimated at 4 characters per token). */
  usage?: UsageOverrides;
  /** Checks on the request. */
  expect?: ScenarioExpect;
  /** Faults to inject (see `MockFaults`). */
  faults?: MockFaults;
  /**
   * Emit exactly these events instead of `items` (a captured stream replayed): objects are
   * JSON-encoded, strings are sent verbatim as the `data:` line. Their own `sequence_number`s are
   * kept; `[DONE]` follows unless `faults.omitDone`. The `response` of the last lifecycle event is
   * stored, so a follow-up may chain on its id.
   */
  rawEvents?: Array<JsonObject | string>;
  /**
   * The same for `POST /chat/completions`: emit exactly these chunks (a captured Chat Completions
   * stream replayed, e.g. a file of `test/fixtures/chat-captures`), then `data: [DONE]` unless
   * `faults.omitDone`. Streaming chat requests only; a `/responses` request that reaches this turn
   * is refused with `scenario_mismatch` (and a chat request reaching a `rawEvents` turn likewise).
   */
  rawChunks?: Array<JsonObject | string>;
  /**
   * Refuse this turn's request with HTTP 400 `context_length_exceeded` when its input is estimated
   * at more than this many tokens (see `estimateInputTokens` in `usage.ts`). The refused request does
   * not use up the turn, so the client's retry after compacting gets it. Overrides the scenario's.
   */
  contextWindow?: number;
  /** Only on the last turn: answer every further request with this turn. */
  repeat?: boolean;
  /** Ignore `tool_choice`, `parallel_tool_calls` and `max_tool_calls` (a non-compliant server). */
  ignoreToolChoice?: boolean;
}

/** A scenario: the turns in order. */
export interface Scenario {
  name?: string;
  description?: string;
  /** The context window of every turn (a turn's own `contextWindow` wins): see `ScenarioTurn.contextWindow`. */
  contextWindow?: number;
  turns: ScenarioTurn[];
}
