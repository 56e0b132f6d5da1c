/**
 * `LLMProvider` (docs/decisions.md #16): the small, opinionated surface for callers
 * that drive their own loop — a one-shot call, one agent turn over `previous_response_id`, and
 * structured output parsed and validated against a schema. Built on the provider contract, so
 * retries, timeouts, validation and frames come with it.
 */
import type { ZodType } from "zod";
import { EddyError } from "../errors.js";
import type { ProviderFrame } from "../frames/frame.js";
import type { CreateResponseBody, FunctionToolParam, JsonObject } from "../protocol/types.js";
import { compileSchema, type JsonSchema } from "../util/schema.js";
import type { AssembledResponse } from "./assembler/index.js";
import type { CompactRequest, CompactResult, Provider } from "./provider.js";

/** Options of `createLLMProvider`. */
export interface LLMProviderOptions {
  provider: Provider;
  /** The model, or null to let the server choose. */
  model: string | null;
  /**
   * Extra fields for every request (temperature, max_output_tokens, reasoning, …).
   * @defaultValue none
   */
  request?: Partial<CreateResponseBody>;
  /**
   * Sees every frame of every request (logging, recording).
   * @defaultValue none
   */
  onFrame?: (frame: ProviderFrame) => void;
}

/** A tool as the migration surface declares it (docs/decisions.md #16): name, description, JSON Schema parameters. */
export interface LLMTool {
  name: string;
  description?: string;
  parameters?: JsonSchema;
  /** @defaultValue false */
  strict?: boolean;
}

/** A function call the model made. `id` is its `call_id` (key the output by it). */
export interface LLMToolCall {
  id: string;
  name: string;
  /** The arguments JSON string, exactly as produced. */
  arguments: string;
}

/** One agent turn for `generateResponsesTurn`. */
export interface TurnRequest {
  /** Empty or absent: start a conversation with `userInput` and `tools`. Set: continue it. */
  previousResponseId?: string;
  userInput?: string;
  instructions?: string;
  tools?: LLMTool[];
  /** Outputs for the previous turn's calls, by call id, in the order to send them. */
  functionOutputs?: Record<string, string> | Map<string, string>;
}

/** What one agent turn produced: text, the calls to answer, and the id to continue from. */
export interface TurnReply {
  assistantText: string;
  toolCalls: LLMToolCall[];
  responseId: string;
}

/** Per-call options of an `LLMProvider`. */
export interface CallOptions {
  /** Cancels the call. @defaultValue none */
  signal?: AbortSignal;
}

/** What `LLMProvider.compact` compacts: a conversation as items, a stored response chain, or both. */
export interface LLMCompactRequest {
  /** The conversation (or what follows `previousResponseId`): a string is one user message. @defaultValue [] */
  input?: string | readonly JsonObject[];
  /** A response whose chain is compacted too. @defaultValue none */
  previousResponseId?: string;
  /** @defaultValue none */
  instructions?: string;
}

/**
 * A small surface for callers that drive their own loop: one-shot text, one agent turn, structured output.
 */
export interface LLMProvider {
  /** One-shot: instructions + message → assistant text (no tools). */
  generateResponse(instructions: string, message: string, options?: CallOptions): Promise<string>;
  /** One agent turn (see `TurnRequest`). */
  generateResponsesTurn(turn: TurnRequest, options?: CallOptions): Promise<TurnReply>;
  /** Structured output: the answer parsed and validated against `schema` (`text.format` json_schema, strict). */
  generateObject<T = unknown>(
    request: {
      instructions?: string;
      input: string;
      name: string;
      schema: JsonSchema | ZodType<T>;
      description?: string;
    },
    options?: CallOptions,
  ): Promise<T>;
  /**
   * Compacts a conversation on the server (`POST /responses/compact`, `CompactResource` in
   * schemas/openresponses/openapi.json): the items that stand for it — the recent messages and an
   * opaque `compaction` item — to send as the next request's `input` without `previousResponseId`.
   * Throws a `ProviderError` when the server refuses, and an `unsupported_request` error when the
   * provider has no compaction (`Provider.compact`).
   */
  compact(request: LLMCompactRequest, options?: CallOptions): Promise<CompactResult>;
}

/**
 * The `LLMProvider` over any provider: retries, timeouts, validation and frames come with it.
 *
 * @example
 * ```ts
 * const llm = createLLMProvider({ provider, model: "gpt-5-mini" });
 * const text = await llm.generateResponse("Be brief.", "What is SSE?");
 * const verdict = await llm.generateObject({ input: "Is 7 prime?", name: "verdict", schema: z.object({ prime: z.boolean() }) });
 * ```
 */
export function createLLMProvider(options: LLMProviderOptions): LLMProvider {
  const send = (body: JsonObject, callOptions: CallOptions = {}) => sendOnce(options, body, callOptions);
  return {
    async generateResponse(instructions, message, callOptions) {
      return (await send({ instructions, input: userInput(message) }, callOptions)).outputText;
    },
    async generateResponsesTurn(turn, callOptions) {
      const response = await send(turnBody(turn), callOptions);
      if (response.id === null) {
        throw new EddyError(
          "invalid_response",
          "the response has no id, so the conversation cannot be continued",
          { fault: "provider" },
        );
      }
      return {
        assistantText: response.outputText,
        toolCalls: response.calls.map((c) => ({ id: c.callId, name: c.name, arguments: c.arguments })),
        responseId: response.id,
      };
    },
    async generateObject(request, callOptions) {
      const compiled = compileSchema(
        `output schema "${request.name}"`,
        request.schema as JsonSchema | ZodType,
      );
      const format: JsonObject = {
        type: "json_schema",
        name: request.name,
        schema: compiled.jsonSchema,
        strict: true,
      };
      if (request.description !== undefined) format.description = request.description;
      const body: JsonObject = { input: userInput(request.input), text: { format } };
      if (request.instructions !== undefined) body.instructions = request.instructions;
      const text = (await send(body, callOptions)).outputText;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        throw mismatch(request.name, `the answer is not valid JSON (${(err as Error).message})`, text);
      }
      const checked = compiled.validate(value);
      if (!checked.ok) throw mismatch(request.name, checked.problems.join("; "), text);
      return checked.value as never;
    },
    compact: (request, callOptions) => compactWith(options, request, callOptions),
  };
}

async function compactWith(
  options: LLMProviderOptions,
  request: LLMCompactRequest,
  callOptions: CallOptions = {},
): Promise<CompactResult> {
  const { provider } = options;
  if (provider.compact === undefined) {
    throw new EddyError(
      "unsupported_request",
      `provider ${provider.name} cannot compact a conversation (it has no POST /responses/compact)`,
      { fault: "user" },
    );
  }
  const input = request.input ?? [];
  const compact: CompactRequest = {
    model: options.model,
    input: typeof input === "string" ? [userMessage(input)] : input,
  };
  if (request.previousResponseId !== undefined) compact.previousResponseId = request.previousResponseId;
  if (request.instructions !== undefined) compact.instructions = request.instructions;
  return provider.compact(compact, callOptions.signal === undefined ? {} : { signal: callOptions.signal });
}

function userMessage(text: string): JsonObject {
  return { type: "message", role: "user", content: [{ type: "input_text", text }] };
}

/** One request, streamed to its end: the response, or the typed error (an incomplete answer is one). */
async function sendOnce(
  options: LLMProviderOptions,
  body: JsonObject,
  callOptions: CallOptions,
): Promise<AssembledResponse> {
  const full = {
    ...(options.model === null ? {} : { model: options.model }),
    ...options.request,
    ...body,
    stream: true,
  };
  const stream = options.provider.stream(
    { body: full as CreateResponseBody, turn: 0 },
    callOptions.signal ? { signal: callOptions.signal } : {},
  );
  for await (const frame of stream) options.onFrame?.(frame);
  const outcome = await stream.result;
  if (!outcome.ok) throw outcome.error;
  const response = outcome.response;
  if (response.terminal === "incomplete") {
    throw new EddyError(
      "response_incomplete",
      `the response is incomplete (${response.incompleteReason ?? "unknown"})`,
      {
        fault: "provider",
        details: { partialText: response.outputText, reason: response.incompleteReason },
      },
    );
  }
  return response;
}

/** The body of one agent turn: a new conversation, or the outputs continuing one. */
function turnBody(turn: TurnRequest): JsonObject {
  const body: JsonObject = {};
  if (turn.instructions !== undefined) body.instructions = turn.instructions;
  const outputs =
    turn.functionOutputs instanceof Map
      ? [...turn.functionOutputs]
      : Object.entries(turn.functionOutputs ?? {});
  if (turn.previousResponseId) {
    const input: JsonObject[] = outputs.map(([callId, output]) => ({
      type: "function_call_output",
      call_id: callId,
      output,
    }));
    if (turn.userInput !== undefined && turn.userInput !== "") input.push(userMessage(turn.userInput));
    body.previous_response_id = turn.previousResponseId;
    body.input = input;
  } else {
    body.input = userInput(turn.userInput ?? "");
  }
  if (turn.tools !== undefined && turn.tools.length > 0) body.tools = turn.tools.map(declaration);
  body.store = true;
  return body;
}

function declaration(tool: LLMTool): FunctionToolParam {
  const out: FunctionToolParam = { type: "function", name: tool.name, strict: tool.strict ?? false };
  if (tool.description !== undefined) out.description = tool.description;
  out.parameters = (tool.parameters ?? { type: "object", properties: {} }) as FunctionToolParam["parameters"];
  return out;
}

function mismatch(name: string, problem: string, text: string): EddyError {
  return new EddyError("output_schema_mismatch", `the answer does not match the ${name} schema: ${problem}`, {
    fault: "model",
    details: { text },
  });
}

/**
 * A prompt as one user message item, never a bare string: at least one third-party Open Responses
 * server iterates a string `input` per character.
 */
function userInput(text: string): JsonObject[] {
  return [userMessage(text)];
}
