/**
 * Model output as Markdown. The text is untrusted: marked turns it into HTML, DOMPurify removes
 * everything that could run or reach out (scripts, event handlers, `javascript:` URLs, forms,
 * styles), and remote images become a note instead of a request. The page's
 * Content-Security-Policy is the second wall (page.ts).
 *
 * Nothing in the answer may name the page's own parts either: a `class` put the page's CSS on the
 * model's HTML (`<div class="raw-rows">`, absolutely positioned, laid a fake run header over the real
 * one), and an `id` was found by the page's own `getElementById` (a `<p id="raw">` froze a live
 * page). So `class`, `id`, `name` and every attribute that points at an element by its id are
 * removed, and the answer's box contains what it draws (page.css, `.markdown`).
 */
import DOMPurify from "dompurify";
import { Marked } from "marked";

const marked = new Marked({ gfm: true, breaks: false, async: false });
const purify = DOMPurify(window);

/** Renders untrusted Markdown into `el` as sanitized HTML. */
export function renderMarkdown(el: HTMLElement, text: string): HTMLElement {
  const html = marked.parse(text) as string;
  const fragment = purify.sanitize(html, {
    // HTML only: no SVG or MathML (they add nothing to a model's answer but size and attack surface).
    USE_PROFILE: { html: true },
    FORBID_TAGS: [
      "style",
      "form",
      "input",
      "button",
      "textarea",
      "select",
      "iframe",
      "object",
      "embed",
      "svg",
      "math",
      "dialog",
    ],
    FORBID_ATTR: [
      "style",
      "class",
      "id",
      "name",
      "form",
      "for",
      "list",
      "headers",
      "itemref",
      "popover",
      "popovertarget",
      "popovertargetaction",
      "slot",
      "part",
      "is",
    ],
    ALLOW_ARIA_ATTR: false, // aria-labelledby, aria-controls, … name elements by id
    ALLOW_DATA_ATTR: false, // the page's CSS and code select on data-* attributes
    RETURN_DOM_FRAGMENT: true,
  });
  for (const a of fragment.querySelectorAll("a")) {
    if (!/^https?:/i.test(a.getAttribute("href") ?? "")) continue;
    a.setAttribute("target", "_blank");
    a.setAttribute("rel", "noopener noreferrer");
  }
  for (const img of fragment.querySelectorAll("img")) {
    const src = img.getAttribute("src") ?? "";
    if (src.startsWith("data:image/")) continue;
    const note = document.createElement("span");
    note.className = "img-blocked";
    note.textContent = `[image not loaded: ${img.getAttribute("alt") || src}]`;
    img.replaceWith(note);
  }
  el.replaceChildren(fragment);
  el.classList.add("markdown");
  return el;
}
