/**
 * A tool that needs approval and counts its runs: `write_note({text})` pushes `text` to `runs` and
 * answers "written". For the deferred-approval tests (resume, serve decisions, sub-agents).
 */
import { defineTool, type ToolDefinition } from "../tool.js";

/** `write_note`, needing approval; each run's text is pushed to `runs`. */
export function approvalNoteTool(runs: string[]): ToolDefinition<{ text: string }> {
  return defineTool({
    name: "write_note",
    description: "Writes a note",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    needsApproval: true,
    execute: (args) => {
      runs.push((args as { text: string }).text);
      return "written";
    },
  });
}
