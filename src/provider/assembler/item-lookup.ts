/** Finding (or lazily creating) the item state an event refers to. */
import type { JsonObject } from "../../protocol/types.js";
import { type Assembly, createItemState, type ItemState, putItem } from "./state.js";

/**
 * The item an event refers to: by `output_index` first (stable), else by `item_id`. An item seen
 * for the first time through a delta is created with the type the event implies.
 */
export function itemFor(state: Assembly, event: JsonObject, impliedType: string): ItemState {
  const itemId = typeof event.item_id === "string" ? event.item_id : undefined;
  let index = typeof event.output_index === "number" ? event.output_index : undefined;
  if (index === undefined && itemId !== undefined) index = state.itemIndexById.get(itemId);
  if (index === undefined) index = state.maxIndex + 1;
  let item = state.items.get(index);
  if (item === undefined) {
    item = createItemState(index, impliedType, itemId);
    putItem(state, item);
  }
  if (itemId !== undefined) {
    state.itemIndexById.set(itemId, index);
    item.id ??= itemId;
  }
  return item;
}

/** True once the item's `output_item.done` arrived: later deltas for it are ignored. */
export function isClosed(item: ItemState): boolean {
  return item.done !== undefined;
}

export function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

export function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) ? value : undefined;
}
