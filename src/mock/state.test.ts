import { describe, expect, it } from "vitest";
import type { ItemField, ResponseResource } from "../protocol/types.js";
import { createResponseStore, type StoredResponse } from "./state.js";

/** A stored response whose output is messages with the given item ids. */
function stored(id: string, itemIds: string[]): StoredResponse {
  const output = itemIds.map(
    (itemId) =>
      ({
        type: "message",
        id: itemId,
        status: "completed",
        role: "assistant",
        content: [],
      }) as unknown as ItemField,
  );
  return { resource: { id, output } as unknown as ResponseResource, context: [] };
}

describe("createResponseStore", () => {
  it("forgets an evicted response's output items with it (found by a probe: they stayed findable and in memory for the server's life)", () => {
    const store = createResponseStore(2);
    store.put(stored("resp_1", ["msg_1"]));
    store.put(stored("resp_2", ["msg_2"]));
    store.put(stored("resp_3", ["msg_3"]));
    expect(store.get("resp_1")).toBeUndefined();
    expect(store.findItem("msg_1")).toBeUndefined();
    expect(store.findItem("msg_2")?.id).toBe("msg_2");
    expect(store.size).toBe(2);
  });

  it("keeps an item id a later response reused when the earlier one goes", () => {
    const store = createResponseStore(1);
    store.put(stored("resp_1", ["msg_same"]));
    const later = stored("resp_2", ["msg_same"]);
    store.put(later);
    expect(store.findItem("msg_same")).toBe(later.resource.output[0]);
    store.delete("resp_2");
    expect(store.findItem("msg_same")).toBeUndefined();
  });

  it("keeps about maxChars characters of responses, counting each one's context and output, and always the newest (found by a probe: 320 requests of 900 KB held 424 MB in eddy serve, on the way to 10,000)", () => {
    const store = createResponseStore(100, 1_200);
    const big = (id: string) => ({
      ...stored(id, [`msg_${id}`]),
      context: [{ text: "x".repeat(400) }] as never,
    });
    store.put(big("resp_1"));
    store.put(big("resp_2"));
    expect(store.size).toBe(2);
    store.put(big("resp_3"));
    expect(store.get("resp_1")).toBeUndefined();
    expect(store.findItem("msg_resp_1")).toBeUndefined();
    expect(store.get("resp_3")).toBeDefined();
    const huge = { ...stored("resp_4", []), context: [{ text: "x".repeat(5_000) }] as never };
    store.put(huge);
    expect(store.size).toBe(1);
    expect(store.get("resp_4")).toBe(huge);
  });
});
