/** Secret scrubbing: defence in depth for anything that may be shown or recorded. */

/**
 * `text` with every occurrence of each secret replaced by `mask`. Secrets shorter than 4
 * characters are ignored (masking them would shred ordinary text).
 */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[], mask = "***"): string {
  let out = text;
  for (const secret of secrets) {
    if (secret !== undefined && secret.length >= 4 && out.includes(secret))
      out = out.split(secret).join(mask);
  }
  return out;
}

/** The secrets worth masking: set, at least 4 characters long, without duplicates. */
export function usableSecrets(secrets: readonly (string | undefined)[]): string[] {
  const out = new Set<string>();
  for (const s of secrets) if (s !== undefined && s.length >= 4) out.add(s);
  return [...out];
}

/**
 * `value` with every secret masked in every string it holds, keys included. Copy on write: the
 * same object comes back when nothing needed masking, so a clean value costs one walk and no
 * allocation. `secrets` must come from `usableSecrets`.
 */
export function redactDeep<T>(value: T, secrets: readonly string[], mask = "***"): T {
  if (secrets.length === 0) return value;
  return walk(value, secrets, mask) as T;
}

function walk(value: unknown, secrets: readonly string[], mask: string): unknown {
  if (typeof value === "string") return maskString(value, secrets, mask);
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      const w = walk(v, secrets, mask);
      if (w !== v) {
        copy ??= value.slice();
        copy[i] = w;
      }
    }
    return copy ?? value;
  }
  let copy: Record<string, unknown> | undefined;
  const record = value as Record<string, unknown>;
  for (const key in record) {
    const v = record[key];
    const w = walk(v, secrets, mask);
    const k = maskString(key, secrets, mask);
    if (w !== v || k !== key) {
      copy ??= { ...record };
      if (k !== key) delete copy[key];
      copy[k] = w;
    }
  }
  return copy ?? value;
}

function maskString(text: string, secrets: readonly string[], mask: string): string {
  let out = text;
  for (const secret of secrets)
    if (out.length >= secret.length && out.includes(secret)) out = out.split(secret).join(mask);
  return out;
}

/**
 * `texts` (joined: `joined`) with each occurrence of a secret masked: `***` in the text where it
 * starts, its characters taken out of every text that holds them — joined, they are the joined
 * text masked, as the final text is. Undefined when none occurs.
 */
export function maskAcross(
  texts: readonly string[],
  joined: string,
  secrets: readonly string[],
): string[] | undefined {
  const found: [number, number][] = [];
  for (const secret of secrets) {
    for (let at = joined.indexOf(secret); at !== -1; at = joined.indexOf(secret, at + secret.length)) {
      const end = at + secret.length;
      if (!found.some(([s, e]) => at < e && s < end)) found.push([at, end]);
    }
  }
  if (found.length === 0) return undefined;
  found.sort((a, b) => a[0] - b[0]);
  const out: string[] = [];
  let offset = 0;
  for (const text of texts) {
    const start = offset;
    const end = offset + text.length;
    let piece = "";
    let from = start;
    for (const [s, e] of found) {
      if (e <= start || s >= end) continue;
      if (s > from) piece += joined.slice(from, s);
      if (s >= start) piece += "***";
      from = Math.max(from, Math.min(e, end));
    }
    if (from < end) piece += joined.slice(from, end);
    out.push(piece);
    offset = end;
  }
  return out;
}

/**
 * `value` with a secret split between the texts of one list's parts (a message's content parts:
 * `[{type:"output_text", text:"a sk-pro"}, {…, text:"be-SECRET b"}]`) masked across them, as
 * `maskAcross` masks it across streamed deltas: each part's text alone holds no secret for
 * `redactDeep` to find. Copy on write.
 */
export function redactAcrossParts<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  return acrossParts(value, secrets) as T;
}

function acrossParts(value: unknown, secrets: readonly string[]): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const w = acrossParts(value[i], secrets);
      if (w === value[i]) continue;
      out ??= value.slice();
      out[i] = w;
    }
    return maskedParts(out ?? value, secrets) ?? out ?? value;
  }
  let copy: Record<string, unknown> | undefined;
  const record = value as Record<string, unknown>;
  for (const key in record) {
    const w = acrossParts(record[key], secrets);
    if (w === record[key]) continue;
    copy ??= { ...record };
    copy[key] = w;
  }
  return copy ?? value;
}

/** A list of two or more parts with texts, its texts masked across; undefined when nothing is. */
function maskedParts(list: readonly unknown[], secrets: readonly string[]): unknown[] | undefined {
  const at: number[] = [];
  const texts: string[] = [];
  list.forEach((v, i) => {
    const text = (v as { text?: unknown } | null)?.text;
    if (typeof text === "string" && v !== null && typeof v === "object") {
      at.push(i);
      texts.push(text);
    }
  });
  if (texts.length < 2) return undefined;
  const masked = maskAcross(texts, texts.join(""), secrets);
  if (masked === undefined) return undefined;
  const out = list.slice();
  at.forEach((i, k) => {
    out[i] = { ...(list[i] as object), text: masked[k] };
  });
  return out;
}
