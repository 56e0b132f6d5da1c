/**
 * Runs built-in tool calls one after the other and prints their `{ok, output, error}` as a JSON
 * array: the child-process half of `runToolsInChild` (test-support/workspace.ts).
 *
 *   node --import tsx run-tool.ts CALLS_JSON [UID]    CALLS_JSON: [{workspace, name, args}, …]
 *
 * With UID, the process first loads everything it needs (the tools worker included) and then
 * drops to that user and group, so the calls run unprivileged wherever the sources are.
 */
import { runInWorker } from "../builtin/worker-task.js";
import { allBuiltins, runTool, type ToolCallSpec } from "./workspace.js";

const calls = JSON.parse(process.argv[2] ?? "[]") as ToolCallSpec[];
const uid = process.argv[3] === undefined ? undefined : Number(process.argv[3]);
const registry = allBuiltins();
if (uid !== undefined) {
  await runInWorker(
    "apply_chunks",
    { content: "", chunks: [], path: "warm-up" },
    new AbortController().signal,
  );
  process.setgid?.(uid);
  process.setuid?.(uid);
}
const results = [];
for (const call of calls) {
  const r = await runTool(registry, call.workspace, call.name, call.args);
  results.push({ ok: r.ok, output: r.output, error: r.error });
}
process.stdout.write(JSON.stringify(results));
