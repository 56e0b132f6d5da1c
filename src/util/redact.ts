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
