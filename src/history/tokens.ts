/**
 * Token counts for budgets and thresholds. OpenAI models are counted with their real BPE encoding
 * (`gpt-tokenizer`, pure JS, loaded on first use: see bench/RESULTS.md "Tokenizers" for why this
 * one and what loading costs); every other model gets `estimateTokens`, a documented rule of thumb.
 *
 * Items are counted by their string fields, not their JSON: `encrypted_content` (opaque base64 the
 * tokenizer would count far too high) is estimated at 4 characters a token, and an inline image or
 * file at a flat `MEDIA_TOKENS`. Each item adds `ITEM_OVERHEAD_TOKENS` for its framing.
 */
import type { JsonObject } from "../protocol/types.js";
import { importPackage } from "../util/import-package.js";
import { wholeCut } from "../util/text.js";

/** Counts the tokens of a text. */
export interface TokenCounter {
  /** `o200k_base`, `cl100k_base`, `o200k_harmony` (a real tokenizer) or `estimate`. */
  readonly name: string;
  count(text: string): number;
}

/** Tokens charged for one inline image or file (data URL or file data), whatever its size. */
export const MEDIA_TOKENS = 1_000;
/** Tokens charged per item for its role/type framing. */
export const ITEM_OVERHEAD_TOKENS = 4;

/**
 * A tokenizer-free estimate: ASCII characters at 4 a token; other characters below U+2E80 (accented
 * Latin, Greek, Cyrillic, Arabic, Hebrew, …) at 2 a token; CJK, Hangul and the rest of the BMP at 1
 * token each; characters outside the BMP (emoji) at 2 tokens each. Measured against o200k_base
 * (bench/RESULTS.md "Tokenizers"): 0.99× on source code, 0.91× on English prose, 1.00× on emoji,
 * 1.22× on JSON, 1.4–1.5× on CJK and Cyrillic — mostly high, the safe side for a budget. It never
 * exceeds the UTF-8 byte length, which `TokenMeter` relies on.
 */
export function estimateTokens(text: string): number {
  let ascii = 0;
  let narrow = 0;
  let wide = 0;
  let astral = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) ascii++;
    else if (c >= 0xd800 && c <= 0xdbff) {
      astral++;
      i++; // the low surrogate belongs to the same character
    } else if (c < 0x2e80) narrow++;
    else wide++;
  }
  return Math.ceil(ascii / 4 + narrow / 2 + wide + astral * 2);
}

/** The estimate as a counter (`name: "estimate"`). */
export const estimateCounter: TokenCounter = { name: "estimate", count: estimateTokens };

type Encoding = "o200k_base" | "cl100k_base" | "o200k_harmony";

/**
 * The counter for `model`: its real encoding when it is an OpenAI model (a name `gpt-tokenizer`
 * knows, or one of the `gpt-`, `o<digit>`, `chatgpt-`, `codex-` families, also behind an `openai/`
 * route prefix), else the estimate. The tokenizer module (~5 MB of ranks) is imported on the first
 * call for that encoding and cached by the module system, so later calls are cheap.
 */
export async function createTokenCounter(model: string | null | undefined): Promise<TokenCounter> {
  const encoding = await encodingFor(model);
  if (encoding === undefined) return estimateCounter;
  const mod = await loadEncoding(encoding);
  // Special-token markers (`<|endoftext|>`) in a tool result are plain text to count, not an error.
  const options = { disallowedSpecial: new Set<string>() };
  return { name: encoding, count: (text) => countInPieces(text, (piece) => mod.countTokens(piece, options)) };
}

/** Longest text the tokenizer is given at once; longer text is counted in pieces. */
export const TOKENIZER_PIECE_CHARS = 1_000;

/**
 * `count` over `text` in pieces of at most `TOKENIZER_PIECE_CHARS`, each cut before a whitespace
 * in its second half where there is one (where the encoding's pre-tokenizer splits too, so prose
 * and code count the same), never inside a surrogate pair. BPE merges one pre-token in quadratic
 * time: 200 KB of one repeated letter (or of spaces) took gpt-tokenizer ~38 s on the main thread
 * before the first request, and Ctrl-C waited for it. A cut inside a word can add a token, so a
 * count is at most one token per piece high, and never above the UTF-8 byte length.
 */
export function countInPieces(text: string, count: (piece: string) => number): number {
  if (text === "") return 0;
  if (text.length <= TOKENIZER_PIECE_CHARS) return count(text);
  let tokens = 0;
  for (let at = 0; at < text.length; ) {
    let end = wholeCut(text, at + TOKENIZER_PIECE_CHARS);
    if (end < text.length) {
      const floor = at + TOKENIZER_PIECE_CHARS / 2;
      for (let i = end - 1; i > floor; i--) {
        const c = text.charCodeAt(i);
        if (c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d) {
          end = i;
          break;
        }
      }
    }
    tokens += count(text.slice(at, end));
    at = end;
  }
  return tokens;
}

async function encodingFor(model: string | null | undefined): Promise<Encoding | undefined> {
  if (model === null || model === undefined || model === "") return undefined;
  const name = model.startsWith("openai/") ? model.slice("openai/".length) : model;
  const { modelToEncodingMap } =
    await importPackage<typeof import("gpt-tokenizer/mapping")>("gpt-tokenizer/mapping");
  const known = (modelToEncodingMap as Record<string, string | undefined>)[name];
  if (known === "o200k_base" || known === "cl100k_base" || known === "o200k_harmony") return known;
  if (known !== undefined) return "cl100k_base"; // older encodings: the Responses API does not serve those models
  if (/^gpt-oss/.test(name)) return "o200k_harmony";
  if (/^(gpt-[45]|o\d|chatgpt-|codex-|computer-use)/.test(name)) return "o200k_base";
  return undefined;
}

interface EncodingModule {
  countTokens(text: string, options: { disallowedSpecial: Set<string> }): number;
}

async function loadEncoding(encoding: Encoding): Promise<EncodingModule> {
  switch (encoding) {
    case "o200k_base":
      return importPackage<EncodingModule>("gpt-tokenizer/encoding/o200k_base");
    case "cl100k_base":
      return importPackage<EncodingModule>("gpt-tokenizer/encoding/cl100k_base");
    case "o200k_harmony":
      return importPackage<EncodingModule>("gpt-tokenizer/encoding/o200k_harmony");
  }
}

/**
 * Counts items with a per-item cache (items are immutable once in a history, so a long
 * conversation is counted once, not once per request). `upperBound` is a cheap bound from the JSON
 * byte length: no byte-level BPE tokenizer, and not the estimate, produces more tokens than bytes,
 * so a history whose bound is under a threshold never needs the tokenizer loaded.
 */
export class TokenMeter {
  private readonly tokensByItem = new WeakMap<object, number>();
  private readonly bytesByItem = new WeakMap<object, number>();

  constructor(readonly counter: TokenCounter) {}

  /** Tokens of one item (cached). */
  item(item: JsonObject): number {
    let n = this.tokensByItem.get(item);
    if (n === undefined) {
      n = ITEM_OVERHEAD_TOKENS + this.value(item, "");
      this.tokensByItem.set(item, n);
    }
    return n;
  }

  /** Tokens of a list of items. */
  items(items: readonly JsonObject[]): number {
    let n = 0;
    for (const item of items) n += this.item(item);
    return n;
  }

  /** An upper bound on `items(items)` that needs no tokenizer. */
  upperBound(items: readonly JsonObject[]): number {
    let n = 0;
    for (const item of items) {
      let b = this.bytesByItem.get(item);
      if (b === undefined) {
        b = ITEM_OVERHEAD_TOKENS + Buffer.byteLength(JSON.stringify(item)) + MEDIA_TOKENS * countMedia(item);
        this.bytesByItem.set(item, b);
      }
      n += b;
    }
    return n;
  }

  private value(value: unknown, key: string): number {
    if (typeof value === "string") {
      if (key === "encrypted_content") return Math.ceil(value.length / 4);
      if ((key === "image_url" || key === "file_data" || key === "file_url") && value.startsWith("data:"))
        return MEDIA_TOKENS;
      if (key === "type" || key === "id" || key === "call_id" || key === "status") return 0;
      return this.counter.count(value);
    }
    if (Array.isArray(value)) {
      let n = 0;
      for (const v of value) n += this.value(v, "");
      return n;
    }
    if (value !== null && typeof value === "object") {
      let n = 0;
      for (const [k, v] of Object.entries(value)) n += this.value(v, k);
      return n;
    }
    return 0;
  }
}

function countMedia(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + countMedia(v), 0);
  if (value === null || typeof value !== "object") return 0;
  let n = 0;
  for (const [k, v] of Object.entries(value)) {
    if (
      (k === "image_url" || k === "file_data" || k === "file_url") &&
      typeof v === "string" &&
      v.startsWith("data:")
    )
      n++;
    else n += countMedia(v);
  }
  return n;
}
