/** Finding (or lazily creating) the item state an event refers to. */
import type { JsonObject } from "../../protocol/types.js";
import { type Assembly, createItemState, type ItemState, putItem } from "./state.js";

/**
 * The item an event refers to: by `output_index` first (stable: some servers rotate item ids
 * mid-item), else by `item_id`. An item seen for the first time through a delta is created with
 * the type the event implies. A server that gave two items one `output_index` had the second's
 * events taken for the first's, ignored since it was done, and a call lost: at an index whose item
 * is done, an `output_item.added` (`starts`) of an item with another id starts that item at an
 * index of its own, and the later events naming it go there.
 */
export function itemFor(state: Assembly, event: JsonObject, impliedType: string, starts = false): ItemState {
  const itemId = typeof event.item_id === "string" ? event.item_id : undefined;
  let index = typeof event.output_index === "number" ? event.output_index : undefined;
  if (index === undefined && itemId !== undefined) index = state.itemIndexById.get(itemId);
  if (index === undefined) index = state.maxIndex + 1;
  let item = state.items.get(index);
  if (
    item !== undefined &&
    isClosed(item) &&
    itemId !== undefined &&
    item.id !== undefined &&
    item.id !== itemId
  ) {
    const own = state.itemIndexById.get(itemId);
    if (own !== undefined && own !== index) index = own;
    else if (starts) index = state.maxIndex + 1;
    item = state.items.get(index);
  }
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
