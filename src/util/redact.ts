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
