/**
 * Cutting a JSON-valued attribute (`gen_ai.input.messages`, `gen_ai.output.messages`,
 * `gen_ai.system_instructions`, a tool call's arguments and result) to the attribute length limit
 * and keeping it JSON (docs/pitfalls.md #116). A plain cut of `[{"role":"user","parts":[…` left
 * text no backend could parse, so a trace viewer showed nothing of the messages at all.
 *
 * The cut is made inside the last string value that fits (never inside a key or an escape, never
 * between the halves of a surrogate pair); that string ends with a marker saying how many
 * characters of the JSON text were left out, and the arrays and objects still open are closed. What
 * is kept is the start of the JSON, as with any other attribute. Lengths are in UTF-16 code units,
 * as the OpenTelemetry JS SDK counts them (its `Span._truncateToLimitUtil` cuts with `substring`).
 */
const MARKER_START = "…[";
const MARKER_END = " characters left out]";

/** The marker that ends a cut JSON string: `…[1234 characters left out]`. */
export function cutMarker(leftOut: number): string {
  return `${MARKER_START}${leftOut}${MARKER_END}`;
}

/**
 * `json` (valid JSON text) in at most `max` characters, still valid JSON (see the module comment).
 * When not even the first string value fits with its marker, an empty array or object (`[]`, `{}`)
 * stands for the value, or `""` when `max` is below 2.
 */
export function capJson(json: string, max: number): string {
  if (json.length <= max) return json;
  const stack: string[] = [];
  let keyNext = false;
  let cut = -1;
  let closers = "";
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (c === "[" || c === "{") {
      stack.push(c === "[" ? "]" : "}");
      keyNext = c === "{";
    } else if (c === "]" || c === "}") stack.pop();
    else if (c === ",") keyNext = stack.at(-1) === "}";
    else if (c === '"') {
      const end = stringEnd(json, i);
      if (!keyNext) {
        const close = `"${[...stack].reverse().join("")}`;
        const last = lastCutIn(json, i + 1, end, max, close.length);
        // Positions only grow from here (a closer passed is one fewer to add): nothing later fits.
        if (last === undefined) break;
        cut = last;
        closers = close;
        if (last < end) break;
      }
      keyNext = false;
      i = end;
    }
  }
  if (cut < 0) return max < 2 ? "" : json.startsWith("{") ? "{}" : json.startsWith("[") ? "[]" : "";
  return `${json.slice(0, cut)}${cutMarker(json.length - cut)}${closers}`;
}

/** The index of the quote that closes the string opened at `start`. */
function stringEnd(json: string, start: number): number {
  let i = start + 1;
  while (i < json.length && json[i] !== '"') i += json[i] === "\\" ? 2 : 1;
  return i;
}

/**
 * The last index in `from..end` (a string's characters and its closing quote) where the JSON can
 * be cut with the marker and `closeLength` more characters within `max`, or undefined for none.
 */
function lastCutIn(
  json: string,
  from: number,
  end: number,
  max: number,
  closeLength: number,
): number | undefined {
  let found: number | undefined;
  let p = from;
  while (p <= end) {
    if (p + markerLength(json.length - p) + closeLength > max) return found;
    found = p;
    if (p === end) break;
    if (json[p] === "\\") p += json[p + 1] === "u" ? 6 : 2;
    else p += isHighSurrogate(json.charCodeAt(p)) && isLowSurrogate(json.charCodeAt(p + 1)) ? 2 : 1;
  }
  return found;
}

function markerLength(leftOut: number): number {
  let digits = 1;
  for (let n = leftOut; n >= 10; n = Math.floor(n / 10)) digits++;
  return MARKER_START.length + digits + MARKER_END.length;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
