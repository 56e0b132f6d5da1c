/**
 * What the "model" decided to answer, before it is streamed: the output items of one response and
 * how the response ends. Scenario turns and the demo model both produce a `TurnPlan`; the tool
 * policy trims it; `events.ts` turns it into the spec's event sequence.
 */
import { assertNever } from "../errors.js";
import type { ResponseError } from "../protocol/types.js";
import type { IdGenerator } from "./ids.js";

/** A text part or a refusal part of an assistant message. */
export type PlannedPart = { type: "output_text"; text: string } | { type: "refusal"; refusal: string };

/** An assistant message. */
export interface PlannedMessage {
  type: "message";
  /** Assigned by `assignIds` when the model leaves it out. */
  id?: string;
  phase?: "commentary" | "final_answer";
  parts: PlannedPart[];
}

/** A function call; `arguments` is sent verbatim (it may be invalid JSON on purpose). */
export interface PlannedFunctionCall {
  type: "function_call";
  id?: string;
  call_id?: string;
  name: string;
  arguments: string;
}

/** A reasoning item: summary texts, raw reasoning texts, and an opaque `encrypted_content`. */
export interface PlannedReasoning {
  type: "reasoning";
  id?: string;
  summary: string[];
  content: string[];
  /** Emitted only when the request asks for it with `include: ["reasoning.encrypted_content"]`. */
  encrypted_content?: string;
}

/** One output item. */
export type PlannedItem = PlannedMessage | PlannedFunctionCall | PlannedReasoning;

/** A planned item with its ids assigned. */
export type ReadyItem =
  | (PlannedMessage & { id: string })
  | (PlannedFunctionCall & { id: string; call_id: string })
  | (PlannedReasoning & { id: string });

/** Token counts a turn reports instead of the mock's estimate (any subset). */
export interface UsageOverrides {
  input_tokens?: number;
  output_tokens?: number;
  cached_tokens?: number;
  reasoning_tokens?: number;
}

/** How a response ends. */
export type PlannedStatus = "completed" | "incomplete" | "failed";

/** One response, as planned. */
export interface TurnPlan {
  items: PlannedItem[];
  status: PlannedStatus;
  /** `incomplete_details.reason` when `status` is `incomplete`. */
  incompleteReason?: string;
  /** `response.error` when `status` is `failed`. */
  error?: ResponseError;
  usage?: UsageOverrides;
}

/** A plan whose items all have ids. */
export interface ReadyPlan extends Omit<TurnPlan, "items"> {
  items: ReadyItem[];
}

/** Gives every item without one its id (and every call its `call_id`), in output order. */
export function assignIds(plan: TurnPlan, ids: IdGenerator): ReadyPlan {
  const items = plan.items.map((item): ReadyItem => {
    switch (item.type) {
      case "message":
        return { ...item, id: item.id ?? ids.next("msg") };
      case "function_call":
        return { ...item, id: item.id ?? ids.next("fc"), call_id: item.call_id ?? ids.next("call") };
      case "reasoning":
        return { ...item, id: item.id ?? ids.next("rs") };
      default:
        return assertNever(item, "planned item");
    }
  });
  return { ...plan, items };
}
