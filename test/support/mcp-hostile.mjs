#!/usr/bin/env node
/**
 * A raw JSON-RPC MCP server over stdio that misbehaves on purpose, for tests of how eddy's MCP
 * client stands up to a hostile server. Plain JavaScript, no SDK: it writes exactly what a test
 * needs on the wire.
 *
 *   node mcp-hostile.mjs MODE [LOG]     LOG: a file each received line is appended to
 *
 * Modes (every mode lists `echo {t}`, which answers "echo:ARGS", unless it says otherwise):
 *   redos        tool `r` whose inputSchema has `pattern: "^(a+)+$"` (catastrophic backtracking)
 *   redos-out    `echo` has an outputSchema with that pattern and answers structuredContent
 *                {t: "a"×40 + "!"}
 *   lookahead    tool `la` whose inputSchema pattern uses lookahead (RE2 cannot run it)
 *   deep         tool `deep`, its inputSchema nested DEPTH (env, default 3000) levels deep
 *   hang-relist  after a tools/call: sends tools/list_changed and never answers tools/list again
 *   loop-relist  after a tools/call: each tools/list first sends tools/list_changed again
 *   error        tools/call answers a JSON-RPC error: code CODE (env, default -32000), message
 *                "the server's own words"
 *   init-error   initialize answers that error
 *   list-error   tools/list answers that error
 *   bad-list     lists 3 tools whose inputSchema type is "string" (not what the MCP schema allows)
 *   bad-result   tools/call answers {content: "not a list"} (not what the MCP schema allows)
 *   many         lists COUNT (env, default 1500) tools `t0`…, 500 a page (nextCursor), then `echo`
 *   huge-text    lists `big` (its description "a" then 2,000,000 "🦀": 8 MB), `titled` (no
 *                description, a title of 100,000 "t"), `wide` (an input schema of 3,000 properties,
 *                ~200 KB) and `echo`
 *   heavy        lists COUNT (env, default 100) tools `h0`…, 25 a page (nextCursor), then `echo`:
 *                each just within the per-tool bounds (a description of 8,000 "d", an input schema
 *                of ~60 KB), ~68 KB a tool, so the listing is ~6.8 MB; with GROW (env) set, after a
 *                tools/call it sends tools/list_changed and lists GROW tools from then on
 */
import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";

const mode = process.argv[2] ?? "basic";
const logFile = process.argv[3];
const send = (m) => process.stdout.write(`${JSON.stringify(m)}\n`);
const object = (properties = {}) => ({ type: "object", properties });
let called = false;

function tools() {
  const echo = { name: "echo", description: "echo", inputSchema: object({ t: { type: "string" } }) };
  switch (mode) {
    case "redos":
      return [{ name: "r", inputSchema: object({ t: { type: "string", pattern: "^(a+)+$" } }) }, echo];
    case "redos-out":
      return [{ ...echo, outputSchema: object({ t: { type: "string", pattern: "^(a+)+$" } }) }];
    case "bad-list":
      return ["a", "b", "c"].map((name) => ({ name, inputSchema: { type: "string" } }));
    case "huge-text": {
      const properties = {};
      for (let i = 0; i < 3000; i++)
        properties[`p${i}`] = { type: "string", description: "a property of a wide tool" };
      return [
        { name: "big", description: `a${"🦀".repeat(2_000_000)}`, inputSchema: object() },
        { name: "titled", title: "t".repeat(100_000), inputSchema: object() },
        { name: "wide", description: "wide", inputSchema: object(properties) },
        echo,
      ];
    }
    case "lookahead":
      return [{ name: "la", inputSchema: object({ t: { type: "string", pattern: "^(?=a)a+$" } }) }, echo];
    default:
      return [echo];
  }
}

/** The tools/list answer as raw JSON (the deep schema is built as text: no recursion here). */
function listAnswer(id) {
  if (mode !== "deep") return JSON.stringify({ jsonrpc: "2.0", id, result: { tools: tools() } });
  const depth = Number(process.env.DEPTH ?? 3000);
  const schema = `${'{"type":"object","properties":{"a":'.repeat(depth)}{"type":"object"}${"}}".repeat(depth)}`;
  const echo = JSON.stringify(tools()[0]);
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"tools":[{"name":"deep","inputSchema":${schema}},${echo}]}}`;
}

/** A tool of the `heavy` listing: just within each per-tool bound (~68 KB). */
function heavyTool(i) {
  const properties = {};
  for (let p = 0; p < 600; p++) properties[`p${p}`] = { type: "string", description: "x".repeat(64) };
  return { name: `h${i}`, description: "d".repeat(8000), inputSchema: object(properties) };
}

/**
 * A page of the `many` (or `heavy`) listing: 500 (25) tools from the cursor on, the next cursor
 * while any are left.
 */
function manyPage(m) {
  const heavy = mode === "heavy";
  const grown = called && process.env.GROW !== undefined;
  const count = Number((grown ? process.env.GROW : process.env.COUNT) ?? (heavy ? 100 : 1500));
  const from = Number(m.params?.cursor ?? 0);
  const to = Math.min(count, from + (heavy ? 25 : 500));
  const page = [];
  for (let i = from; i < to; i++)
    page.push(heavy ? heavyTool(i) : { name: `t${i}`, inputSchema: object({ a: { type: "string" } }) });
  if (to === count) page.push(tools()[0]);
  send({
    jsonrpc: "2.0",
    id: m.id,
    result: { tools: page, ...(to < count ? { nextCursor: String(to) } : {}) },
  });
}

function list(m) {
  if (mode === "many" || mode === "heavy") return manyPage(m);
  if (mode === "hang-relist" && called) return;
  if (mode === "loop-relist" && called) {
    send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    setTimeout(() => process.stdout.write(`${listAnswer(m.id)}\n`), 50);
    return;
  }
  process.stdout.write(`${listAnswer(m.id)}\n`);
}

/** Answers `m` with the error of CODE (env) in the server's own words. */
function refuse(m) {
  const code = Number(process.env.CODE ?? -32000);
  send({ jsonrpc: "2.0", id: m.id, error: { code, message: "the server's own words" } });
}

function call(m) {
  if (mode === "error") return refuse(m);
  if (mode === "hang-relist" || mode === "loop-relist" || (mode === "heavy" && process.env.GROW)) {
    called = true;
    send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
  }
  if (mode === "bad-result") return send({ jsonrpc: "2.0", id: m.id, result: { content: "not a list" } });
  const args = m.params?.arguments ?? {};
  const result = { content: [{ type: "text", text: `echo:${JSON.stringify(args)}` }] };
  if (mode === "redos-out") result.structuredContent = { t: `${"a".repeat(40)}!` };
  send({ jsonrpc: "2.0", id: m.id, result });
}

createInterface({ input: process.stdin }).on("line", (line) => {
  if (logFile !== undefined) appendFileSync(logFile, `${line.slice(0, 300)}\n`);
  let m;
  try {
    m = JSON.parse(line);
  } catch {
    return;
  }
  if (m.method === "initialize" && mode === "init-error") refuse(m);
  else if (m.method === "tools/list" && mode === "list-error") refuse(m);
  else if (m.method === "initialize") {
    send({
      jsonrpc: "2.0",
      id: m.id,
      result: {
        protocolVersion: m.params.protocolVersion,
        capabilities: { tools: { listChanged: true } },
        serverInfo: { name: "hostile", version: "1" },
      },
    });
  } else if (m.method === "tools/list") list(m);
  else if (m.method === "tools/call") call(m);
  else if (m.id !== undefined && m.method === "ping") send({ jsonrpc: "2.0", id: m.id, result: {} });
  else if (m.id !== undefined && m.method !== undefined)
    send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no such method" } });
});
