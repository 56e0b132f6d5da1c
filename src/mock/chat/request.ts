/**
 * Reading a `POST /chat/completions` body: a zod schema of the fields the mock
 * understands, then the pairing rules OpenAI enforces on `tool` messages. Each refusal is a 400
 * `invalid_request_error` whose `param` names the field (`messages[2].tool_call_id`), as on
 * `/responses`. Top-level fields the mock does not model (`seed`, `user`, `logit_bias`, a server's
 * own extras such as `top_k`) are accepted and ignored, as most OpenAI-compatible servers do.
 */
import { z } from "zod";
import { invalidRequest } from "../http-error.js";
import { formatPath } from "../scenario-load.js";

const text = z.string();
const nullableText = text.nullable().optional();

const textPart = z.object({ type: z.literal("text"), text });
const refusalPart = z.object({ type: z.literal("refusal"), refusal: text });
const imagePart = z.object({
  type: z.literal("image_url"),
  image_url: z.object({
    url: text.min(1, "expected an image URL or a data URL"),
    detail: z.enum(["auto", "low", "high"]).optional(),
  }),
});
const filePart = z.object({
  type: z.literal("file"),
  file: z.object({
    file_data: text.optional(),
    file_id: text.optional(),
    filename: text.optional(),
  }),
});
const audioPart = z.object({
  type: z.literal("input_audio"),
  input_audio: z.object({ data: text, format: text }),
});

/** `content` of a message: a string or an array of parts (which parts depends on the role). */
function content<T extends z.ZodType>(part: T) {
  return z.union([text, z.array(part)], { error: "expected a string or an array of content parts" });
}

const toolCall = z.object({
  id: text.min(1, "expected a non-empty call id"),
  type: z.literal("function"),
  function: z.object({ name: text.min(1, "expected a function name"), arguments: text }),
});

const message = z.discriminatedUnion(
  "role",
  [
    z.object({ role: z.literal("system"), content: content(textPart), name: text.optional() }),
    z.object({ role: z.literal("developer"), content: content(textPart), name: text.optional() }),
    z.object({
      role: z.literal("user"),
      content: content(z.discriminatedUnion("type", [textPart, imagePart, filePart, audioPart])),
      name: text.optional(),
    }),
    z.object({
      role: z.literal("assistant"),
      content: z
        .union([text, z.array(z.discriminatedUnion("type", [textPart, refusalPart]))], {
          error: "expected a string, an array of text/refusal parts, or null",
        })
        .nullable()
        .optional(),
      refusal: nullableText,
      tool_calls: z.array(toolCall).nullable().optional(),
      name: text.optional(),
    }),
    z.object({
      role: z.literal("tool"),
      tool_call_id: text.min(1, "expected the id of the call this message answers"),
      content: content(textPart),
    }),
  ],
  { error: "expected role 'system', 'developer', 'user', 'assistant' or 'tool'" },
);

const functionName = text.regex(/^[a-zA-Z0-9_-]{1,64}$/, "must be 1-64 characters of a-z, A-Z, 0-9, _ or -");

const tool = z.object({
  type: z.literal("function"),
  function: z.object({
    name: functionName,
    description: text.optional(),
    parameters: z.record(text, z.unknown()).optional(),
    strict: z.boolean().nullable().optional(),
  }),
});

const namedFunction = z.object({ type: z.literal("function"), function: z.object({ name: text }) });

const toolChoice = z.union(
  [
    z.enum(["none", "auto", "required"]),
    namedFunction,
    z.object({
      type: z.literal("allowed_tools"),
      allowed_tools: z.object({ mode: z.enum(["auto", "required"]), tools: z.array(namedFunction).min(1) }),
    }),
  ],
  {
    error:
      "expected 'none', 'auto', 'required', {type: 'function', function: {name}} or {type: 'allowed_tools', allowed_tools: {mode, tools}}",
  },
);

const responseFormat = z.discriminatedUnion(
  "type",
  [
    z.object({ type: z.literal("text") }),
    z.object({ type: z.literal("json_object") }),
    z.object({
      type: z.literal("json_schema"),
      json_schema: z.object({
        name: functionName,
        description: text.optional(),
        schema: z.record(text, z.unknown()).optional(),
        strict: z.boolean().nullable().optional(),
      }),
    }),
  ],
  { error: "expected type 'text', 'json_object' or 'json_schema'" },
);

const positiveInt = z.number().int().min(1);

const chatBody = z.object({
  model: text.min(1, "expected a model name"),
  messages: z.array(message).min(1, "expected at least one message"),
  stream: z.boolean().nullable().optional(),
  stream_options: z
    .object({ include_usage: z.boolean().optional(), include_obfuscation: z.boolean().optional() })
    .nullable()
    .optional(),
  tools: z.array(tool).optional(),
  tool_choice: toolChoice.optional(),
  parallel_tool_calls: z.boolean().optional(),
  max_tokens: positiveInt.nullable().optional(),
  max_completion_tokens: positiveInt.nullable().optional(),
  response_format: responseFormat.optional(),
  reasoning_effort: z.enum(["none", "minimal", "low", "medium", "high", "xhigh"]).nullable().optional(),
  n: z.literal(1, "the mock answers with one choice; n must be 1").nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().min(0).max(1).nullable().optional(),
  store: z.boolean().nullable().optional(),
});

/** A `POST /chat/completions` body that passed validation. */
export type ChatRequestBody = z.infer<typeof chatBody>;
/** One message of `messages`. */
export type ChatMessage = ChatRequestBody["messages"][number];
/** A part of a user message's `content`. */
export type ChatUserPart = Exclude<Extract<ChatMessage, { role: "user" }>["content"], string>[number];

/** Validates a chat body (parsed with `parseJsonBody`); throws an HTTP 400 problem naming the field when it is refused. */
export function parseChatBody(value: Record<string, unknown>): ChatRequestBody {
  const parsed = chatBody.safeParse(value);
  if (!parsed.success) throw refusal(parsed.error.issues[0]);
  const body = parsed.data;
  if (body.stream_options != null && body.stream !== true) {
    throw invalidRequest(
      "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
      "stream_options",
      "invalid_value",
    );
  }
  if (body.max_tokens != null && body.max_completion_tokens != null) {
    throw invalidRequest(
      "Set either 'max_tokens' or 'max_completion_tokens', not both ('max_tokens' is the older name of the same limit).",
      "max_tokens",
      "invalid_value",
    );
  }
  checkPairing(body.messages);
  return body;
}

/**
 * OpenAI's pairing rules: an assistant message with `tool_calls` is followed directly by one `tool`
 * message per call id, and a `tool` message answers a call of the assistant message before it.
 */
function checkPairing(messages: ChatMessage[]): void {
  let open: { index: number; ids: Set<string> } | undefined;
  const closeOpen = (at: number) => {
    if (open === undefined || open.ids.size === 0) return;
    const missing = [...open.ids].map((id) => `'${id}'`).join(", ");
    throw invalidRequest(
      `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; messages[${open.index}] has no answer for ${missing} before messages[${at}].`,
      `messages[${open.index}].tool_calls`,
      "invalid_value",
    );
  };
  messages.forEach((m, i) => {
    if (m.role === "tool") {
      if (open === undefined || !open.ids.delete(m.tool_call_id)) {
        throw invalidRequest(
          `messages[${i}] is a 'tool' message for '${m.tool_call_id}', but the assistant message before it has no tool call with that id (or it was answered already).`,
          `messages[${i}].tool_call_id`,
          "invalid_value",
        );
      }
      return;
    }
    closeOpen(i);
    open = undefined;
    if (m.role === "assistant" && m.tool_calls != null && m.tool_calls.length > 0) {
      const ids = new Set<string>();
      m.tool_calls.forEach((call, j) => {
        if (ids.has(call.id)) {
          throw invalidRequest(
            `Duplicate tool call id '${call.id}' in messages[${i}].tool_calls.`,
            `messages[${i}].tool_calls[${j}].id`,
            "invalid_value",
          );
        }
        ids.add(call.id);
      });
      open = { index: i, ids };
    }
  });
  closeOpen(messages.length);
}

type Issue = z.core.$ZodIssue;

/** The 400 for the first schema issue, descending into union branches to the field at fault. */
function refusal(first: Issue | undefined) {
  const issue = first === undefined ? undefined : deepest(first, []);
  if (issue === undefined) return invalidRequest("Invalid request body.", null, "invalid_value");
  const param = issue.path.length === 0 ? "" : formatPath(issue.path);
  const missing = issue.issue.code === "invalid_type" && /received undefined$/.test(issue.issue.message);
  if (missing) {
    return invalidRequest(`Missing required parameter: '${param}'.`, param, "missing_required_parameter");
  }
  const what = issue.issue.message.replace(/^Invalid input: /, "");
  return invalidRequest(
    `Invalid '${param}': ${what}.`,
    param === "" ? null : param,
    issue.issue.code === "invalid_type" ? "invalid_type" : "invalid_value",
  );
}

/**
 * The most specific issue: for a union, the branch that got furthest into the value (a
 * `content` array whose third part lacks `text` is reported at that part, not as "invalid union").
 */
function deepest(issue: Issue, base: PropertyKey[]): { issue: Issue; path: PropertyKey[] } {
  const path = [...base, ...issue.path];
  if (issue.code !== "invalid_union" || issue.errors.length === 0) return { issue, path };
  let best: { issue: Issue; path: PropertyKey[] } | undefined;
  for (const branch of issue.errors) {
    const first = branch[0];
    if (first === undefined || first.path.length === 0) continue;
    const found = deepest(first, path);
    if (best === undefined || found.path.length > best.path.length) best = found;
  }
  return best ?? { issue, path };
}
