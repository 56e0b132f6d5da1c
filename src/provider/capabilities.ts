/**
 * Provider capabilities: the one place that says what a provider supports. The loop, the request
 * builder and the history code read these flags; nothing else branches on a provider's name.
 */

export interface ProviderCapabilities {
  /**
   * Chaining with `previous_response_id` works (responses are stored). When false the run is
   * stateless from its first request (DESIGN.md §8.4).
   */
  previousResponseId: boolean;
  /** `include: ["reasoning.encrypted_content"]` is accepted and returned (stateless reasoning round-trip). */
  encryptedReasoning: boolean;
  /** `function_call` / `function_call_output` items are accepted as input (native tool history). */
  nativeToolHistory: boolean;
  /** `strict: true` on function tools is honoured. */
  strictTools: boolean;
  /** A stateless resend keeps server item ids (`id`) on resent items; false strips them (pain point 9). */
  keepItemIds: boolean;
  /** `max_tool_calls` is accepted in requests. */
  maxToolCalls: boolean;
  /** `parallel_tool_calls` is accepted in requests. */
  parallelToolCalls: boolean;
}

/** A safe default for an unknown Open Responses server: the spec's features, nothing vendor-specific. */
export const GENERIC_CAPABILITIES: ProviderCapabilities = {
  previousResponseId: true,
  encryptedReasoning: true,
  nativeToolHistory: true,
  strictTools: false,
  keepItemIds: true,
  maxToolCalls: true,
  parallelToolCalls: true,
};

export function withCapabilities(overrides: Partial<ProviderCapabilities> = {}): ProviderCapabilities {
  return { ...GENERIC_CAPABILITIES, ...overrides };
}
