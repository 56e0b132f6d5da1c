/**
 * What varies between Chat Completions servers in what they accept. Everything else is the same
 * request: a profile (profiles.ts) says which of these its server needs.
 */

/** The request settings a Chat Completions server needs. */
export interface ChatDialect {
  /**
   * The role of the message that carries the run's instructions (and of `system`/`developer`
   * input items). OpenAI's reasoning models prefer `developer`; most other servers know only
   * `system`.
   * @defaultValue "system"
   */
  instructionsRole: "system" | "developer";
  /**
   * The field that carries `max_output_tokens`. OpenAI deprecated `max_tokens` for
   * `max_completion_tokens`; most other servers read `max_tokens`.
   * @defaultValue "max_tokens"
   */
  maxTokensField: "max_tokens" | "max_completion_tokens";
  /**
   * Send `stream_options: {include_usage: true}` so the last chunk reports token usage. Mistral and
   * Groq refuse the field (and report usage without it).
   * @defaultValue true
   */
  streamUsage: boolean;
}

/** The settings of a server that follows OpenAI's Chat Completions API. */
export const DEFAULT_CHAT_DIALECT: ChatDialect = {
  instructionsRole: "system",
  maxTokensField: "max_tokens",
  streamUsage: true,
};

/** `overrides` over the defaults. */
export function chatDialect(overrides: Partial<ChatDialect> = {}): ChatDialect {
  return { ...DEFAULT_CHAT_DIALECT, ...overrides };
}
