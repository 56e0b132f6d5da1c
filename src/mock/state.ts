/**
 * Provider-side state, as a real provider keeps it: responses stored in memory (unless the request
 * says `store: false`) so a later request can continue one with `previous_response_id`. The model
 * then sees `previous.input + previous.output + new input`, recursively (spec §8.6).
 */
import type { CreateResponseBody, ItemField, ItemParam, ResponseResource } from "../protocol/types.js";
import { expandCompactions } from "./compaction.js";
import { MOCK_DEFAULTS } from "./defaults.js";
import { httpProblem, invalidRequest } from "./http-error.js";
import { inputItems } from "./request.js";

/** Any item of a conversation: sent by the client or produced by the model. */
export type ConversationItem = ItemParam | ItemField;

/** A stored response and the context it was produced from. */
export interface StoredResponse {
  resource: ResponseResource;
  /** The items the model saw: the chain's history plus the request's own input. */
  context: ConversationItem[];
}

/** In-memory response store of one mock server. */
export interface ResponseStore {
  get(id: string): StoredResponse | undefined;
  put(stored: StoredResponse): void;
  /** Forgets a response (a WebSocket connection evicts the one a failed continuation named). */
  delete(id: string): void;
  /** An output item of any stored response, by item id (for `item_reference` inputs). */
  findItem(id: string): ItemField | undefined;
  readonly size: number;
}

/**
 * Creates a store that keeps at most `limit` responses and about `maxChars` characters of them
 * (`storedChars`); past either, the oldest go first — their output items with them: they stayed
 * findable by `item_reference` and held in memory for as long as the server ran, which for `eddy
 * serve`'s face is weeks. The newest response is always kept.
 */
export function createResponseStore(
  limit: number = MOCK_DEFAULTS.storeResponses,
  maxChars: number = MOCK_DEFAULTS.storeChars,
): ResponseStore {
  const responses = new Map<string, { stored: StoredResponse; chars: number }>();
  const items = new Map<string, ItemField>();
  let chars = 0;
  const forget = (id: string) => {
    const entry = responses.get(id);
    if (entry === undefined) return;
    responses.delete(id);
    chars -= entry.chars;
    // An item id a later response reused (a scripted id) stays that response's.
    for (const item of entry.stored.resource.output) if (items.get(item.id) === item) items.delete(item.id);
  };
  return {
    get: (id) => responses.get(id)?.stored,
    put(stored) {
      forget(stored.resource.id);
      const size = storedChars(stored, maxChars);
      responses.set(stored.resource.id, { stored, chars: size });
      chars += size;
      for (const item of stored.resource.output) items.set(item.id, item);
      while (responses.size > 1 && (responses.size > limit || chars > maxChars)) {
        const [oldest] = responses.keys();
        if (oldest === undefined) break;
        forget(oldest);
      }
    },
    delete: forget,
    findItem: (id) => items.get(id),
    get size() {
      return responses.size;
    },
  };
}

/** A stored response's size: its context and output as JSON, in characters (`max` when they cannot be written). */
function storedChars(stored: StoredResponse, max: number): number {
  try {
    return JSON.stringify(stored.context).length + JSON.stringify(stored.resource.output).length;
  } catch {
    return max;
  }
}

/**
 * A store that reads `first`, then `fallback`, and writes and deletes in `first` only: a WebSocket
 * connection's own cache of `store: false` responses in front of the server's store.
 */
export function layeredStore(first: ResponseStore, fallback: ResponseStore): ResponseStore {
  return {
    get: (id) => first.get(id) ?? fallback.get(id),
    put: (stored) => first.put(stored),
    delete: (id) => first.delete(id),
    findItem: (id) => first.findItem(id) ?? fallback.findItem(id),
    get size() {
      return first.size + fallback.size;
    },
  };
}

/** What the model sees for one request. */
export interface Conversation {
  /** The whole context: previous responses' context and output, then `input` (compaction items expanded). */
  context: ConversationItem[];
  /** The request's own input items (a string input made a user message). */
  input: ItemParam[];
}

/**
 * Resolves a request's conversation. Refuses (HTTP problems) an unknown `previous_response_id`
 * (404 `previous_response_not_found`), an unknown `item_reference`, a compaction item this mock did
 * not produce (400 `invalid_encrypted_content`, see `compaction.ts`), and a `function_call_output`
 * whose `call_id` matches no `function_call` of the conversation (400, `param` = `input[i].call_id`).
 */
export function resolveConversation(
  store: ResponseStore,
  body: Pick<CreateResponseBody, "previous_response_id" | "input">,
): Conversation {
  const history: ConversationItem[] = [];
  const previousId = body.previous_response_id;
  if (previousId !== undefined && previousId !== null) {
    const previous = store.get(previousId);
    if (previous === undefined) {
      throw httpProblem({
        status: 404,
        error: {
          type: "invalid_request_error",
          code: "previous_response_not_found",
          message: `Previous response with id '${previousId}' not found.`,
          param: "previous_response_id",
        },
      });
    }
    history.push(...previous.context, ...previous.resource.output);
  }
  const input = inputItems(body);
  const resolved = input.map((item, index): ConversationItem => {
    // An `item_reference` (its `type` may be left out) stands for a stored output item.
    if (item.type !== undefined && item.type !== null && item.type !== "item_reference") return item;
    const found = store.findItem(item.id);
    if (found === undefined) {
      throw invalidRequest(`Item with id '${item.id}' not found.`, `input[${index}].id`, "item_not_found");
    }
    return found;
  });
  const context = [...history, ...expandCompactions(resolved, (index) => `input[${index}]`)];
  const callIds = new Set<string>();
  for (const item of context) if (item.type === "function_call") callIds.add(item.call_id);
  input.forEach((item, index) => {
    if (item.type === "function_call_output" && !callIds.has(item.call_id)) {
      throw invalidRequest(
        `No tool call found for function call output with call_id '${item.call_id}'.`,
        `input[${index}].call_id`,
        "function_call_not_found",
      );
    }
  });
  return { context, input };
}
