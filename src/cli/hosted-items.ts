/**
 * Hosted tool items in the human view: one line per item the provider ran for the model — what
 * was searched, which files were searched and found, what code ran, which remote MCP tool was
 * called, where a generated image was saved. Shapes from the OpenAI captures under
 * test/fixtures/captures/openai/ (openai-web-search-tool.1, openai-file-search-tool.1,
 * openai-code-interpreter-tool.1, openai-image-generation-tool.1, openai-mcp-tool*.1).
 *
 * Generated images (`image_generation_call.result`, base64) are written to the workspace as
 * files named after the item (`ig_….webp`), in every output mode, so a run's pictures are kept.
 */
import { closeSync, constants, lstatSync, openSync } from "node:fs";
import { join } from "node:path";
import type { Frame } from "../frames/frame.js";
import type { JsonObject } from "../protocol/types.js";
import { WRITE_FLAGS, writeAllSync } from "../util/regular-file.js";
import { clip } from "./terminal.js";

/**
 * Writes the image unless something is at `path` already, which is left alone: the same item's
 * image from an earlier run (a resume, a replay) counts as saved; a symlink a cloned repository
 * ships under that name (dangling or not) or a FIFO does not (EEXIST), and is never followed.
 */
function writeNewFile(path: string, bytes: Uint8Array): void {
  let fd: number;
  try {
    fd = openSync(path, WRITE_FLAGS | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST" && lstatSync(path).isFile()) return;
    throw err;
  }
  try {
    writeAllSync(fd, bytes);
  } finally {
    closeSync(fd);
  }
}

/** The finished output item an `item_done` frame carries, if the frame is one. */
export function doneItem(frame: Frame): JsonObject | undefined {
  return frame.type === "item_done" ? frame.item : undefined;
}

/** The file extensions a generated image is saved with (anything else is saved as `.png`). */
const IMAGE_FORMATS: ReadonlySet<string> = new Set(["png", "jpeg", "jpg", "webp", "gif"]);

/** Saves generated images to the workspace; remembers where each went. */
export class ImageSaver {
  private readonly saved = new Map<string, string>();

  constructor(private readonly workspace: string) {}

  /** Saves the image of a done `image_generation_call` (once per item id). */
  observe(frame: Frame): void {
    const item = doneItem(frame);
    if (item?.type !== "image_generation_call" || typeof item.result !== "string" || item.result === "")
      return;
    const given = typeof item.id === "string" ? item.id.replace(/[^A-Za-z0-9_-]/g, "_") : "";
    const id = given === "" ? `image_${this.saved.size}` : given;
    if (this.saved.has(id)) return;
    // An image format only: a provider (or a tape) naming `py` or `envrc` wrote conftest.py, .envrc.
    const asked = typeof item.output_format === "string" ? item.output_format.toLowerCase() : "png";
    const format = IMAGE_FORMATS.has(asked) ? asked : "png";
    const name = `${id}.${format}`;
    const path = join(this.workspace, name);
    try {
      writeNewFile(path, Buffer.from(item.result, "base64"));
      this.saved.set(id, name);
    } catch (error) {
      this.saved.set(id, `(not saved: ${(error as NodeJS.ErrnoException).code ?? "error"})`);
    }
  }

  /** Where the image of item `id` was saved (workspace-relative), if it was. */
  pathOf(id: unknown): string | undefined {
    return typeof id === "string" ? this.saved.get(id.replace(/[^A-Za-z0-9_-]/g, "_")) : undefined;
  }
}

/** One line saying what a hosted tool item did, or undefined for any other item. */
export function describeHostedItem(item: JsonObject, imagePath?: string): string | undefined {
  switch (item.type) {
    case "web_search_call": {
      const action = (item.action ?? {}) as JsonObject;
      if (typeof action.query === "string" && action.query !== "")
        return `searched the web: ${clip(action.query, 80)}`;
      if (typeof action.url === "string") return `opened ${clip(action.url, 80)}`;
      return "searched the web";
    }
    case "file_search_call": {
      const queries = Array.isArray(item.queries) ? item.queries.filter((q) => typeof q === "string") : [];
      const files = Array.isArray(item.results)
        ? [
            ...new Set(
              item.results.map((r) => (r as JsonObject)?.filename).filter((f) => typeof f === "string"),
            ),
          ]
        : [];
      const found = files.length === 0 ? "" : ` → ${clip(files.join(", "), 80)}`;
      return `searched files: ${clip(queries.join("; "), 80) || "(no query)"}${found}`;
    }
    case "code_interpreter_call": {
      const code = typeof item.code === "string" ? item.code.trim() : "";
      const lines = code === "" ? 0 : code.split("\n").length;
      return `ran code (${lines} line${lines === 1 ? "" : "s"}): ${clip(code, 80)}`;
    }
    case "image_generation_call":
      return imagePath === undefined ? "generated an image" : `generated an image, saved to ${imagePath}`;
    case "mcp_list_tools": {
      const count = Array.isArray(item.tools) ? item.tools.length : 0;
      return `MCP server ${named(item.server_label)}: ${count} tool${count === 1 ? "" : "s"}`;
    }
    case "mcp_call": {
      const failed = item.error !== null && item.error !== undefined;
      const args = typeof item.arguments === "string" ? ` ${clip(item.arguments, 60)}` : "";
      const error = (item.error as JsonObject | null | undefined)?.message ?? item.error;
      return `MCP ${named(item.server_label)}__${named(item.name)}${args}${failed ? ` — failed: ${clip(typeof error === "string" ? error : (JSON.stringify(error) ?? ""), 80)}` : ""}`;
    }
    case "shell_call": {
      const env = item.environment as JsonObject | undefined;
      if (env === undefined || env === null || env.type === "local") return undefined; // run locally: a tool call
      const commands = (item.action as JsonObject | undefined)?.commands;
      const listed = Array.isArray(commands) ? commands.filter((c) => typeof c === "string") : [];
      return `ran in the provider's container: ${clip(listed.join(" && "), 80) || "(no commands)"}`;
    }
    default:
      return undefined;
  }
}

/**
 * A name the provider gave (a server label, a tool name), as shown: any JSON value, cut to 60
 * characters — a 100,000-character label was printed whole.
 */
function named(value: unknown): string {
  return clip(typeof value === "string" ? value : (JSON.stringify(value) ?? ""), 60);
}
