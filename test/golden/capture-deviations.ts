/**
 * Where each real capture (test/fixtures/captures) departs from Open Responses 2026-04-24, as data.
 *
 * `CAPTURE_DEVIATIONS` lists, per capture, every distinct validation error its frames carry, with
 * the reason it is the provider's deviation and not a bug of our validator. test/captures.test.ts
 * fails when a capture produces an error its list does not explain, and when a listed deviation no
 * longer occurs, so the list stays honest in both directions.
 *
 * `STREAM_QUIRKS` lists the captures whose text deltas cannot be checked the plain way.
 *
 * Messages are compared as "atoms" (see `validationAtoms`): array indices become `*`, "(and N more
 * at other array indices)" is dropped, and "is missing required properties "a", "b"" is split into
 * one atom per property.
 */
import { OPENRESPONSES_SPEC_VERSION } from "../../src/protocol/index.js";

/** One way a capture departs from the spec. */
export interface Deviation {
  /** What deviates, in words. */
  what: string;
  /** Why it is listed here rather than fixed in our validator. */
  reason: string;
  /** The validation atoms it explains (any of them). */
  messages: readonly string[];
  /** The `data.type`s of the events it may occur on (`(invalid JSON)` for undecodable data). */
  events: readonly string[];
}

/** The `type` recorded for a provider_event whose data is not JSON. */
export const INVALID_JSON_EVENT = "(invalid JSON)";

const RESPONSE_EVENTS = [
  "response.created",
  "response.queued",
  "response.in_progress",
  "response.completed",
  "response.failed",
  "response.incomplete",
];
const ITEM_EVENTS = ["response.output_item.added", "response.output_item.done", "response.completed"];
const ALL_EVENTS = [
  ...RESPONSE_EVENTS,
  "response.output_item.added",
  "response.output_item.done",
  "response.content_part.added",
  "response.content_part.done",
  "response.output_text.delta",
  "response.output_text.done",
  "response.function_call_arguments.delta",
  "response.function_call_arguments.done",
];

/** Splits one validation message into the atoms the table is written in. */
export function validationAtoms(message: string): string[] {
  if (message.startsWith("data is not valid JSON: ")) return ["data is not valid JSON"];
  const m = message.replace(/ \(and \d+ more at other array indices\)$/, "").replace(/\/\d+(?=[/ ])/g, "/*");
  const missing = /^(.*) is missing required properties (.*)$/.exec(m);
  if (missing === null) return [m];
  const [, at, props] = missing;
  return (props ?? "").split(", ").map((p) => `${at} is missing required property ${p}`);
}

// ── deviation builders ──────────────────────────────────────────────────────────────────────

/** A ResponseResource field the spec requires (nullable ones as `null`) that `who` leaves out. */
function lacks(field: string, who: string): Deviation {
  return {
    what: `ResponseResource lacks required \`${field}\``,
    reason: `the spec requires \`${field}\` on every ResponseResource (present, null where nullable); ${who} leaves it out`,
    messages: [`/response is missing required property "${field}"`],
    events: RESPONSE_EVENTS,
  };
}

const lacksAll = (who: string, ...fields: string[]): Deviation[] => fields.map((f) => lacks(f, who));

function hostedTool(type: string): Deviation {
  return {
    what: `tool type \`${type}\` in response.tools is not in the spec`,
    reason: `the spec's \`Tool\` union has only \`function\`; \`${type}\` is a hosted tool of the provider's own API, echoed without an implementor prefix`,
    messages: [`/response/tools/* has type "${type}", which the spec does not define here`],
    events: RESPONSE_EVENTS,
  };
}

function hostedItem(type: string): Deviation {
  return {
    what: `output item type \`${type}\` is not in the spec`,
    reason: `\`ItemField\` has message, function_call, function_call_output, reasoning and compaction only; \`${type}\` is a provider item sent without an implementor prefix`,
    messages: [
      `/item has type "${type}", which the spec does not define here`,
      `/response/output/* has type "${type}", which the spec does not define here`,
    ],
    events: ITEM_EVENTS,
  };
}

const hostedItems = (...types: string[]): Deviation[] => types.map(hostedItem);

function unprefixedEvent(type: string): Deviation {
  return {
    what: `unprefixed extension event \`${type}\``,
    reason: `not one of the spec's streaming events, and not \`slug:\`-prefixed as extension events must be (a hosted-tool progress event of the provider's own API)`,
    messages: [
      `unknown event type "${type}": not in Open Responses ${OPENRESPONSES_SPEC_VERSION} (extension events must be prefixed with an implementor slug, e.g. "acme:${type}")`,
    ],
    events: [type],
  };
}

const unprefixedEvents = (...types: string[]): Deviation[] => types.map(unprefixedEvent);

const ANNOTATION_PATHS = [
  "/annotation",
  "/part/annotations/*",
  "/item/content/*/annotations/*",
  "/response/output/*/content/*/annotations/*",
];
const ANNOTATION_EVENTS = [
  "response.output_text.annotation.added",
  "response.content_part.done",
  "response.output_item.done",
  "response.completed",
];

function annotationType(type: string): Deviation {
  return {
    what: `annotation type \`${type}\` is not in the spec`,
    reason: `the spec's \`Annotation\` is \`url_citation\` only; \`${type}\` comes from a hosted tool`,
    messages: ANNOTATION_PATHS.map((p) => `${p} has type "${type}", which the spec does not define here`),
    events: ANNOTATION_EVENTS,
  };
}

function urlCitationLacks(field: string): Deviation {
  return {
    what: `\`url_citation\` annotation lacks required \`${field}\``,
    reason: `xAI's url_citation carries only \`type\` and \`url\`; the spec requires start_index, end_index and title`,
    messages: ANNOTATION_PATHS.map((p) => `${p} is missing required property "${field}"`),
    events: ANNOTATION_EVENTS,
  };
}

function nullNumber(field: string): Deviation {
  return {
    what: `ResponseResource \`${field}\` is null`,
    reason: `xAI sends \`"${field}": null\`; the spec types it as a number (not nullable)`,
    messages: [`/response/${field} must be number`],
    events: RESPONSE_EVENTS,
  };
}

const noSequenceNumber = (why: string): Deviation => ({
  what: "events lack required `sequence_number`",
  reason: `every spec streaming event requires an integer sequence_number; ${why}`,
  messages: ['/ is missing required property "sequence_number"'],
  events: ALL_EVENTS,
});

const COPILOT_NULL_ENCRYPTED_CONTENT: Deviation = {
  what: "reasoning item `encrypted_content` is null",
  reason:
    "GitHub Copilot sends `encrypted_content: null`; the spec types it as an optional string, not nullable",
  messages: ["/item/encrypted_content must be string", "/response/output/*/encrypted_content must be string"],
  events: ITEM_EVENTS,
};

const TRUNCATED_JSON: Deviation = {
  what: "`response.created` and `response.completed` lines are not valid JSON",
  reason:
    "hand-written fixture (resp_parallel): both lines lack their final `}`; they become provider_event status invalid_json with raw kept",
  messages: ["data is not valid JSON"],
  events: [INVALID_JSON_EVENT],
};

// ── providers ───────────────────────────────────────────────────────────────────────────────

const OPENAI = "OpenAI's Responses API (in this capture)";
const AZURE = "Azure OpenAI (in this capture)";
const XAI = "xAI (in every capture)";

/** OpenAI responses of 2025 (and Azure, which mirrors them). */
const openai2025 = (who = OPENAI) => lacksAll(who, "completed_at", "presence_penalty", "frequency_penalty");
const penalties = (who: string) => lacksAll(who, "presence_penalty", "frequency_penalty");

const XAI_RESOURCE = [
  ...lacksAll(
    XAI,
    "completed_at",
    "instructions",
    "error",
    "truncation",
    "presence_penalty",
    "frequency_penalty",
    "top_logprobs",
    "usage",
    "max_tool_calls",
    "background",
    "service_tier",
    "safety_identifier",
    "prompt_cache_key",
  ),
  nullNumber("top_p"),
  nullNumber("temperature"),
];
const XAI_URL_CITATION = ["start_index", "end_index", "title"].map(urlCitationLacks);

const CODE_INTERPRETER_EVENTS = unprefixedEvents(
  "response.code_interpreter_call.in_progress",
  "response.code_interpreter_call_code.delta",
  "response.code_interpreter_call_code.done",
  "response.code_interpreter_call.interpreting",
  "response.code_interpreter_call.completed",
);
const WEB_SEARCH_EVENTS = unprefixedEvents(
  "response.web_search_call.in_progress",
  "response.web_search_call.searching",
  "response.web_search_call.completed",
);
const FILE_SEARCH_EVENTS = unprefixedEvents(
  "response.file_search_call.in_progress",
  "response.file_search_call.searching",
  "response.file_search_call.completed",
);
const IMAGE_EVENTS = unprefixedEvents(
  "response.image_generation_call.in_progress",
  "response.image_generation_call.generating",
);
const MCP_LIST_EVENTS = unprefixedEvents(
  "response.mcp_list_tools.in_progress",
  "response.mcp_list_tools.completed",
);
const MCP_CALL_EVENTS = unprefixedEvents(
  "response.mcp_call.in_progress",
  "response.mcp_call_arguments.delta",
  "response.mcp_call_arguments.done",
  "response.mcp_call.completed",
);
const SHELL_COMMAND_EVENTS = unprefixedEvents(
  "response.shell_call_command.added",
  "response.shell_call_command.delta",
  "response.shell_call_command.done",
);
const SHELL_OUTPUT_EVENTS = unprefixedEvents(
  "response.shell_call_output_content.delta",
  "response.shell_call_output_content.done",
);

/** Every capture, with every deviation its frames show. An empty list: the capture is spec-valid. */
export const CAPTURE_DEVIATIONS: Record<string, readonly Deviation[]> = {
  "azure/azure-code-interpreter-tool.1": [
    ...openai2025(AZURE),
    hostedTool("code_interpreter"),
    hostedItem("code_interpreter_call"),
    ...CODE_INTERPRETER_EVENTS,
  ],
  "azure/azure-image-generation-tool.1": [
    ...openai2025(AZURE),
    hostedTool("image_generation"),
    hostedItem("image_generation_call"),
    ...IMAGE_EVENTS,
    unprefixedEvent("response.image_generation_call.partial_image"),
  ],
  "azure/azure-reasoning-encrypted-content.1": openai2025(AZURE),
  "azure/azure-text.1": penalties(AZURE),
  "azure/azure-tool-call.1": penalties(AZURE),
  "azure/azure-web-search-preview-tool.1": [
    ...openai2025(AZURE),
    hostedTool("web_search_preview"),
    hostedItem("web_search_call"),
    unprefixedEvent("response.web_search_call.in_progress"),
    unprefixedEvent("response.web_search_call.searching"),
  ],
  "open-responses/lmstudio-basic.1": [],
  "open-responses/lmstudio-tool-call.1": unprefixedEvents(
    "response.reasoning_text.delta",
    "response.reasoning_text.done",
  ),
  "open-responses/lmstudio-tool-call.2": unprefixedEvents(
    "response.reasoning_text.delta",
    "response.reasoning_text.done",
  ),
  "open-responses/openai-pdf-input-file.1": [],
  "openai/github-copilot-id-rotation.1": [
    lacks("prompt_cache_key", "GitHub Copilot"),
    COPILOT_NULL_ENCRYPTED_CONTENT,
  ],
  "openai/openai-apply-patch-tool-delete.1": [
    ...openai2025(),
    hostedTool("apply_patch"),
    hostedItem("apply_patch_call"),
  ],
  "openai/openai-apply-patch-tool.1": [
    ...openai2025(),
    hostedTool("apply_patch"),
    hostedItem("apply_patch_call"),
    ...unprefixedEvents(
      "response.apply_patch_call_operation_diff.delta",
      "response.apply_patch_call_operation_diff.done",
    ),
  ],
  "openai/openai-client-tool-search.1": [hostedTool("tool_search"), hostedItem("tool_search_call")],
  "openai/openai-client-tool-search.2": [hostedTool("tool_search"), hostedTool("namespace")],
  "openai/openai-code-interpreter-tool.1": [
    ...openai2025(),
    hostedTool("code_interpreter"),
    hostedItem("code_interpreter_call"),
    annotationType("container_file_citation"),
    ...CODE_INTERPRETER_EVENTS,
  ],
  "openai/openai-compaction.1": [],
  "openai/openai-custom-tool.1": [
    noSequenceNumber("this hand-written fixture (resp_custom_tool_test_001) has none"),
    ...lacksAll(
      "this hand-written fixture (resp_custom_tool_test_001)",
      "completed_at",
      "presence_penalty",
      "frequency_penalty",
      "top_logprobs",
      "max_tool_calls",
      "background",
      "service_tier",
      "safety_identifier",
      "prompt_cache_key",
    ),
    hostedTool("custom"),
    hostedItem("custom_tool_call"),
    unprefixedEvent("response.custom_tool_call_input.delta"),
  ],
  "openai/openai-error.1": openai2025(),
  "openai/openai-file-search-tool.1": [
    ...openai2025(),
    hostedTool("file_search"),
    hostedItem("file_search_call"),
    annotationType("file_citation"),
    ...FILE_SEARCH_EVENTS,
  ],
  "openai/openai-file-search-tool.2": [
    ...openai2025(),
    hostedTool("file_search"),
    hostedItem("file_search_call"),
    annotationType("file_citation"),
    ...FILE_SEARCH_EVENTS,
  ],
  "openai/openai-image-generation-tool.1": [
    ...openai2025(),
    hostedTool("image_generation"),
    hostedItem("image_generation_call"),
    ...IMAGE_EVENTS,
    unprefixedEvent("response.image_generation_call.partial_image"),
    unprefixedEvent("response.image_generation_call.completed"),
  ],
  "openai/openai-local-shell-tool.1": [...openai2025(), hostedItem("local_shell_call")],
  "openai/openai-mcp-tool-approval.1": [
    ...penalties(OPENAI),
    hostedTool("mcp"),
    ...hostedItems("mcp_list_tools", "mcp_approval_request"),
    ...MCP_LIST_EVENTS,
  ],
  "openai/openai-mcp-tool-approval.2": [
    ...penalties(OPENAI),
    hostedTool("mcp"),
    hostedItem("mcp_list_tools"),
    ...MCP_LIST_EVENTS,
  ],
  "openai/openai-mcp-tool-approval.3": [
    ...penalties(OPENAI),
    hostedTool("mcp"),
    ...hostedItems("mcp_list_tools", "mcp_approval_request"),
    ...MCP_LIST_EVENTS,
  ],
  "openai/openai-mcp-tool-approval.4": [
    ...penalties(OPENAI),
    hostedTool("mcp"),
    ...hostedItems("mcp_list_tools", "mcp_call"),
    ...MCP_LIST_EVENTS,
    ...MCP_CALL_EVENTS,
  ],
  "openai/openai-mcp-tool.1": [
    ...openai2025(),
    hostedTool("mcp"),
    ...hostedItems("mcp_list_tools", "mcp_call"),
    ...MCP_LIST_EVENTS,
    ...MCP_CALL_EVENTS,
  ],
  "openai/openai-phase.1": lacksAll(
    "this capture, trimmed by hand upstream (its response keeps only id, object, created_at, status, model, output, service_tier, usage),",
    "completed_at",
    "incomplete_details",
    "previous_response_id",
    "instructions",
    "error",
    "tools",
    "tool_choice",
    "truncation",
    "parallel_tool_calls",
    "text",
    "top_p",
    "presence_penalty",
    "frequency_penalty",
    "top_logprobs",
    "temperature",
    "reasoning",
    "max_output_tokens",
    "max_tool_calls",
    "store",
    "background",
    "metadata",
    "safety_identifier",
    "prompt_cache_key",
  ),
  "openai/openai-reasoning-encrypted-content.1": openai2025(),
  "openai/openai-shell-container-multiturn.1": [hostedTool("shell")],
  "openai/openai-shell-container.1": [
    ...openai2025(), // completed_at is missing from response.created/in_progress only
    hostedTool("shell"),
    ...hostedItems("shell_call", "shell_call_output"),
    ...SHELL_COMMAND_EVENTS,
    ...SHELL_OUTPUT_EVENTS,
  ],
  "openai/openai-shell-local-multiturn.1": [hostedTool("shell")],
  "openai/openai-shell-skills.1": [
    hostedTool("shell"),
    ...hostedItems("shell_call", "shell_call_output"),
    ...SHELL_COMMAND_EVENTS,
    ...SHELL_OUTPUT_EVENTS,
  ],
  "openai/openai-shell-tool.1": [
    ...openai2025(),
    hostedTool("shell"),
    hostedItem("shell_call"),
    ...SHELL_COMMAND_EVENTS,
  ],
  "openai/openai-tool-search.1": [
    hostedTool("tool_search"),
    ...hostedItems("tool_search_call", "tool_search_output"),
  ],
  "openai/openai-web-search-tool.1": [
    ...openai2025(),
    hostedTool("web_search"),
    hostedItem("web_search_call"),
    ...WEB_SEARCH_EVENTS,
  ],
  "openai/parallel-tool-call-wrapper.1": [
    TRUNCATED_JSON,
    noSequenceNumber("this hand-written fixture (resp_parallel) has none"),
  ],
  "openai/programmatic-tool-calling.1": [hostedTool("programmatic_tool_calling"), hostedItem("program")],
  "openai/programmatic-tool-calling.2": [hostedTool("programmatic_tool_calling")],
  "openai/programmatic-tool-calling.3": [
    hostedTool("programmatic_tool_calling"),
    hostedItem("program_output"),
  ],
  "xai/xai-image-generation-tool.1": [
    hostedTool("image_generation"),
    hostedItem("image_generation_call"),
    ...IMAGE_EVENTS,
    unprefixedEvent("response.image_generation_call.completed"),
  ],
  "xai/xai-text-streaming.1": XAI_RESOURCE,
  "xai/xai-text-with-reasoning-streaming-store-false.1": XAI_RESOURCE,
  "xai/xai-text-with-reasoning-streaming.1": XAI_RESOURCE,
  "xai/xai-web-search-tool.1": [
    ...XAI_RESOURCE,
    hostedTool("web_search"),
    hostedItem("web_search_call"),
    ...XAI_URL_CITATION,
  ],
  "xai/xai-x-search-tool": [
    ...XAI_RESOURCE,
    hostedTool("x_search"),
    ...hostedItems("custom_tool_call", "web_search_call"),
    ...XAI_URL_CITATION,
    ...unprefixedEvents("response.custom_tool_call_input.delta", "response.custom_tool_call_input.done"),
    ...WEB_SEARCH_EVENTS,
  ],
};

/** Why a capture's text deltas cannot be checked by summing them per (item_id, content_index). */
export type StreamQuirk =
  | {
      /** Every event carries a fresh `item_id`: deltas are keyed by (output_index, content_index) instead. */
      kind: "item_ids_rotate";
      reason: string;
    }
  | {
      /** Deltas were cut out of the capture: they rebuild only a prefix of the done text. */
      kind: "deltas_elided";
      reason: string;
    }
  | {
      /** The deltas and the done text disagree outright. */
      kind: "deltas_disagree";
      reason: string;
    };

export const STREAM_QUIRKS: Record<string, StreamQuirk> = {
  "openai/github-copilot-id-rotation.1": {
    kind: "item_ids_rotate",
    reason:
      "GitHub Copilot gives every event its own item_id (capture-id-3, -4, …), also in output_item.done and response.completed; only output_index/content_index tie a delta to its part",
  },
  "openai/openai-phase.1": {
    kind: "deltas_elided",
    reason:
      "trimmed by hand upstream: two deltas kept per message, sequence_number jumps (5 → 41, 43 → 49, 52 → 126) and output_index 1 is missing",
  },
  "openai/openai-shell-container.1": {
    kind: "deltas_disagree",
    reason:
      'hand-edited upstream (ids like msg_0f1a2b3c…): the deltas say "The command ran successfully." while the done text is a different, longer answer',
  },
};
