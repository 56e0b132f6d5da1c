/**
 * Provider capabilities: the one place that says what a provider supports. The loop, the request
 * builder and the history code read these flags; nothing else branches on a provider's name.
 *
 * `GENERIC_CAPABILITIES` is the one list of capabilities: the type, `CAPABILITY_KEYS` and the
 * config file's `capabilities` schema (src/cli/config-file.ts) all come from it, so a new
 * capability is one documented line here.
 */

/** A safe default for an unknown Open Responses server: the spec's features, nothing vendor-specific. */
export const GENERIC_CAPABILITIES = {
  /**
   * Chaining with `previous_response_id` works (responses are stored). When false the run is
   * stateless from its first request.
   */
  previousResponseId: true,
  /** `include: ["reasoning.encrypted_content"]` is accepted and returned (stateless reasoning round-trip). */
  encryptedReasoning: true,
  /** `function_call` / `function_call_output` items are accepted as input (native tool history). */
  nativeToolHistory: true,
  /** `strict: true` on function tools is honoured. */
  strictTools: false,
  /** A stateless resend keeps server item ids (`id`) on resent items; false strips them. */
  keepItemIds: true,
  /** `max_tool_calls` is accepted in requests. */
  maxToolCalls: true,
  /** `parallel_tool_calls` is accepted in requests. */
  parallelToolCalls: true,
  /**
   * `POST /responses/compact` works (the provider has `compact`): a run whose context overflows
   * asks the server to compact it before compacting locally.
   */
  compaction: false,
  /**
   * OpenAI's native tool types are accepted and their items answered: `{type:"apply_patch"}`,
   * `{type:"shell"}`, `local_shell` and `custom` tools are offered instead of their function
   * imitations, and `apply_patch_call`, local `shell_call`, `local_shell_call`, `custom_tool_call`
   * and `mcp_approval_request` items are run and answered like function calls (CLI: `--native-tools`).
   */
  nativeTools: false,
  /**
   * A `function_call_output` may be an array of content parts with images (`input_image`), as the
   * spec allows: `read_file` then shows an image to the model instead of a note.
   */
  toolOutputImages: true,
} as const satisfies Record<string, boolean>;

/** What a provider supports: one flag per capability of `GENERIC_CAPABILITIES` (its doc comments apply). */
export type ProviderCapabilities = { -readonly [K in keyof typeof GENERIC_CAPABILITIES]: boolean };

/** The name of one capability. */
export type CapabilityKey = keyof ProviderCapabilities;

/** Every capability name, in declaration order (for schemas, `eddy config` and tests). */
export const CAPABILITY_KEYS = Object.keys(GENERIC_CAPABILITIES) as readonly CapabilityKey[];

/** The generic capabilities with `overrides` applied. */
export function withCapabilities(overrides: Partial<ProviderCapabilities> = {}): ProviderCapabilities {
  return { ...GENERIC_CAPABILITIES, ...overrides };
}

/**
 * What no Chat Completions server can do, whatever the options say: chain on a stored response,
 * return encrypted reasoning, take `max_tool_calls`, or keep item ids (messages have none).
 */
const CHAT_COMPLETIONS_LIMITS: Partial<ProviderCapabilities> = {
  previousResponseId: false,
  encryptedReasoning: false,
  maxToolCalls: false,
  keepItemIds: false,
};

/** The capabilities of a Chat Completions server: `overrides`, within what the API allows. */
export function chatCapabilities(overrides: Partial<ProviderCapabilities> = {}): ProviderCapabilities {
  return withCapabilities({ strictTools: false, ...overrides, ...CHAT_COMPLETIONS_LIMITS });
}
