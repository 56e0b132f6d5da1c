/**
 * A tiny element builder. Text always goes in as text nodes (never parsed as HTML); the only HTML
 * the page inserts is sanitized Markdown (markdown.ts).
 */

/** A child: a node, text, or nothing (skipped). */
export type Child = Node | string | number | null | undefined | false;

/** Attributes (set with setAttribute), a class list, and event listeners. */
export interface Props {
  class?: string;
  on?: Partial<Record<keyof HTMLElementEventMap, (event: Event) => void>>;
  [attribute: string]: string | number | boolean | undefined | Props["on"];
}

/** Creates an element with attributes and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props?: Props | null,
  ...children: Array<Child | Child[]>
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props) {
    for (const [key, value] of Object.entries(props)) {
      if (key === "on" && typeof value === "object") {
        for (const [event, listener] of Object.entries(value)) {
          if (listener) el.addEventListener(event, listener as EventListener);
        }
      } else if (value === true) el.setAttribute(key, "");
      else if (value !== undefined && value !== false) el.setAttribute(key, String(value));
    }
  }
  append(el, children);
  return el;
}

/** Appends children (flattened; nothing for null/undefined/false). */
export function append(el: Node, children: Array<Child | Child[]>): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
}

/** A `<pre>` of text. */
export function pre(text: string, className?: string): HTMLPreElement {
  return h("pre", className ? { class: className } : null, text);
}

/** A collapsible section: `<details>` with a summary. */
export function details(
  summary: Child | Child[],
  body: Child | Child[],
  props: Props = {},
): HTMLDetailsElement {
  return h("details", props, h("summary", null, summary), body);
}

/** Replaces an element's children (skipping null/undefined/false). */
export function fill(el: Element, ...children: Array<Child | Child[]>): void {
  el.replaceChildren();
  append(el, children);
}
