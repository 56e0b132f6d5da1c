/**
 * `toResponsesInput`: a chat history from another stack (VS Code's `LanguageModelChatMessage[]`,
 * the AI SDK's `ModelMessage[]`) as Open Responses `input` items, through `ToolHistoryManager`
 * like every other history: parsed (foreign.ts), paired and repaired, folded past the threshold,
 * rendered by the chosen strategy, then checked against the vendored spec's `ItemParam` schema.
 */
import { EddyError } from "../errors.js";
import { validateInputItem } from "../protocol/validate.js";
import type { ForeignChatMessage } from "./foreign.js";
import { type RenderedHistory, ToolHistoryManager, type ToolHistoryManagerOptions } from "./tool-history.js";

/** Options of `toResponsesInput`: the manager's settings, plus where the history came from. */
export interface ToResponsesInputOptions extends ToolHistoryManagerOptions {
  /**
   * The model that produced the assistant messages (reasoning from another model than `model` is dropped).
   * @defaultValue unknown (reasoning is kept)
   */
  sourceModel?: string;
  /**
   * A manager to render with (its settings win over the ones given here).
   * @defaultValue a manager built from these options
   */
  manager?: ToolHistoryManager;
  /** Cancels a summarization call. @defaultValue none */
  signal?: AbortSignal;
}

/**
 * Translates a foreign chat history into `input` items. Every call gets its output in call order;
 * orphan outputs are dropped and calls without one get a synthetic `ok:false` output (both in
 * `repairs`); repeated call ids are renamed together with their outputs; reasoning stays with what
 * follows it and is dropped when it came from another model (in `notes`).
 *
 * ```ts
 * const { items, repairs, notes } = await toResponsesInput(messages, { capabilities: { nativeToolHistory: true } });
 * runAgent({ provider, model, input: [...items, userMessage] });
 * ```
 */
export async function toResponsesInput(
  messages: readonly ForeignChatMessage[],
  options: ToResponsesInputOptions = {},
): Promise<RenderedHistory> {
  const manager = options.manager ?? new ToolHistoryManager(options);
  const rendered = await manager.render(
    { messages, sourceModel: options.sourceModel },
    options.signal === undefined ? {} : { signal: options.signal },
  );
  rendered.items.forEach((item, i) => {
    const errors = validateInputItem(item);
    if (errors !== undefined) {
      throw new EddyError(
        "invalid_argument",
        `the chat history translates to an invalid input item ${i} (${String((item as { type?: unknown }).type)}): ${errors[0]}`,
        { fault: "user", details: { errors } },
      );
    }
  });
  return rendered;
}
