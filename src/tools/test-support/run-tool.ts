/**
 * Runs built-in tool calls one after the other and prints their `{ok, output, error}` as a JSON
 * array: the child-process half of `runToolsUnprivileged` (test-support/workspace.ts), started as
 * an unprivileged user.
 *
 *   node --import tsx run-tool.ts CALLS_JSON    CALLS_JSON: [{workspace, name, args}, …]
 */
import { allBuiltins, runTool, type ToolCallSpec } from "./workspace.js";

const calls = JSON.parse(process.argv[2] ?? "[]") as ToolCallSpec[];
const registry = allBuiltins();
const results = [];
for (const call of calls) {
  const r = await runTool(registry, call.workspace, call.name, call.args);
  results.push({ ok: r.ok, output: r.output, error: r.error });
}
process.stdout.write(JSON.stringify(results));
