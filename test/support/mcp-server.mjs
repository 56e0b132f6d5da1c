#!/usr/bin/env node
/**
 * A real MCP server, written with the official SDK (`@modelcontextprotocol/sdk`), for tests of
 * eddy's MCP tool sources. Plain JavaScript so a test starts it with `node` alone (no loader, fast).
 *
 *   node mcp-server.mjs [--toolset basic|collide|duplicate|long|bad-schema|lookahead] [--stderr TEXT]
 *                       [--fail-start TEXT] [--hang-start] [--stubborn]
 *                       [--http --token SECRET]   Streamable HTTP on 127.0.0.1 (prints "listening PORT")
 *
 * Without `--http` it speaks stdio. `--stubborn`: a server that is hard to stop — it ignores
 * SIGTERM, stays up when its stdin closes, and starts a child at once (a node process whose
 * command line holds the marker, so `processesWith` finds it too). Tools of the `basic` set:
 *   echo {text}            text content (readOnlyHint)
 *   add {a, b}             structuredContent {sum} plus the same JSON as text
 *   structured_only        structuredContent only, no content blocks
 *   fail                   isError with a two-line message
 *   throws                 the handler throws (a JSON-RPC error, not isError)
 *   media                  image, audio, resource_link and embedded resources (text and blob)
 *   slow {ms}              answers after ms (stops early when the request is cancelled)
 *   crash                  writes to stderr and exits 3 mid-call
 *   spawn_grandchild       starts `sleep 600` (same process group) and answers its pid
 *   add_tool               registers tool `late` and sends notifications/tools/list_changed
 *   env {name}             the value of an environment variable ("<unset>" when unset)
 *   pid                    this server's pid
 *   huge                   11 MiB of text (over the stdio client's message limit)
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const argv = process.argv.slice(2);
const flag = (name) => argv.includes(name);
const value = (name) => {
  const i = argv.indexOf(name);
  return i === -1 ? undefined : argv[i + 1];
};

if (value("--fail-start") !== undefined) {
  process.stderr.write(`${value("--fail-start")}\n`);
  process.exit(2);
}
if (value("--stderr") !== undefined) process.stderr.write(`${value("--stderr")}\n`);

const object = (properties = {}, required = []) => ({ type: "object", properties, required });
// 1×1 transparent PNG.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

const basic = [
  {
    name: "echo",
    description: "Echoes text back.",
    inputSchema: object({ text: { type: "string" } }, ["text"]),
    annotations: { readOnlyHint: true },
  },
  {
    name: "add",
    description: "Adds two numbers.",
    inputSchema: object({ a: { type: "number" }, b: { type: "number" } }, ["a", "b"]),
    annotations: { readOnlyHint: true },
  },
  { name: "structured_only", description: "Structured content only.", inputSchema: object() },
  { name: "fail", description: "Always reports an error.", inputSchema: object() },
  { name: "throws", description: "Its handler throws.", inputSchema: object() },
  { name: "media", description: "Returns non-text content.", inputSchema: object() },
  {
    name: "slow",
    description: "Answers after ms milliseconds.",
    inputSchema: object({ ms: { type: "integer" } }, ["ms"]),
  },
  { name: "crash", description: "Exits mid-call.", inputSchema: object() },
  { name: "spawn_grandchild", description: "Starts a long sleep.", inputSchema: object() },
  { name: "add_tool", description: "Adds the tool `late`.", inputSchema: object() },
  {
    name: "env",
    description: "Reads a variable.",
    inputSchema: object({ name: { type: "string" } }, ["name"]),
  },
  { name: "pid", description: "This server's pid.", inputSchema: object() },
  { name: "huge", description: "Answers 11 MiB of text.", inputSchema: object() },
];

const toolsets = {
  basic,
  collide: [
    { name: "read.file", description: "dotted", inputSchema: object() },
    { name: "read file", description: "spaced", inputSchema: object() },
  ],
  duplicate: [
    { name: "dup", description: "one", inputSchema: object() },
    { name: "dup", description: "two", inputSchema: object() },
  ],
  long: [
    { name: `${"x".repeat(70)}_one`, description: "long one", inputSchema: object() },
    { name: `${"x".repeat(70)}_two`, description: "long two", inputSchema: object() },
  ],
  "bad-schema": [
    {
      name: "tuple",
      description: "A draft-07 schema ajv's 2020-12 mode cannot compile.",
      inputSchema: { type: "object", properties: { p: { type: "array", items: [{ type: "string" }] } } },
    },
    { name: "echo", description: "Echoes text back.", inputSchema: object({ text: { type: "string" } }) },
  ],
  // A lookahead RE2 cannot run, around a pattern that backtracks exponentially on "aaa…!".
  lookahead: [
    {
      name: "match",
      description: "Answers its arguments.",
      inputSchema: object({ s: { type: "string", pattern: "^(?=a)(a+)+$" } }, ["s"]),
    },
  ],
};

const tools = [...(toolsets[value("--toolset") ?? "basic"] ?? basic)];
const text = (t) => ({ content: [{ type: "text", text: t }] });
const grandchildren = [];

async function call(name, args, extra, server) {
  switch (name) {
    case "echo":
      return text(String(args.text));
    case "add": {
      const sum = Number(args.a) + Number(args.b);
      return { content: [{ type: "text", text: JSON.stringify({ sum }) }], structuredContent: { sum } };
    }
    case "structured_only":
      return { content: [], structuredContent: { rows: [1, 2], ok: true } };
    case "fail":
      return { content: [{ type: "text", text: "the widget is broken\nsecond line" }], isError: true };
    case "throws":
      throw new Error("kaboom inside the handler");
    case "media":
      return {
        content: [
          { type: "text", text: "here is media" },
          { type: "image", data: PNG, mimeType: "image/png" },
          { type: "audio", data: Buffer.alloc(300).toString("base64"), mimeType: "audio/wav" },
          {
            type: "resource_link",
            uri: "file:///tmp/report.csv",
            name: "report.csv",
            mimeType: "text/csv",
            description: "the report",
          },
          { type: "resource", resource: { uri: "memo://1", mimeType: "text/plain", text: "memo body" } },
          {
            type: "resource",
            resource: {
              uri: "blob://2",
              mimeType: "application/zip",
              blob: Buffer.alloc(10).toString("base64"),
            },
          },
        ],
      };
    case "slow":
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, Number(args.ms));
        extra.signal.addEventListener("abort", () => {
          clearTimeout(timer);
          resolve();
        });
      });
      return text(`slept ${args.ms}`);
    case "crash":
      process.stderr.write("fatal: out of widgets\n");
      setTimeout(() => process.exit(3), 20);
      return new Promise(() => {});
    case "spawn_grandchild": {
      const child = spawn("sleep", ["600"], { stdio: "ignore" });
      grandchildren.push(child);
      return text(String(child.pid));
    }
    case "add_tool":
      if (!tools.some((t) => t.name === "late")) {
        tools.push({ name: "late", description: "Added later.", inputSchema: object() });
      }
      await server.sendToolListChanged();
      return text("added");
    case "huge":
      return text("x".repeat(11 * 1024 * 1024));
    case "tuple":
    case "match":
      return text(JSON.stringify(args));
    case "late":
      return text("late tool here");
    case "env":
      return text(process.env[args.name] ?? "<unset>");
    case "pid":
      return text(String(process.pid));
    default:
      return { content: [{ type: "text", text: `no tool ${name}` }], isError: true };
  }
}

function newServer() {
  const server = new Server(
    { name: "eddy-test-server", version: "1.0.0" },
    { capabilities: { tools: { listChanged: true } } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) =>
    call(request.params.name, request.params.arguments ?? {}, extra, server),
  );
  return server;
}

if (flag("--stubborn")) {
  process.on("SIGTERM", () => {});
  setInterval(() => {}, 1 << 30);
  const marker = value("--marker") ?? "";
  grandchildren.push(
    spawn(process.execPath, ["-e", "setInterval(() => {}, 1 << 30)", "--", marker], { stdio: "ignore" }),
  );
}

if (flag("--hang-start")) {
  // Reads stdin and never answers: the client's startup timeout must end the wait.
  process.stdin.resume();
} else if (!flag("--http")) {
  await newServer().connect(new StdioServerTransport());
} else {
  const token = value("--token");
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    if (token !== undefined && req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401, { "content-type": "application/json" }).end('{"error":"unauthorized"}');
      return;
    }
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? sessions.get(id) : undefined;
    if (transport === undefined) {
      if (req.method !== "POST") {
        res.writeHead(400).end("no session");
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => sessions.set(sid, transport),
        onsessionclosed: (sid) => sessions.delete(sid),
      });
      await newServer().connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  http.listen(0, "127.0.0.1", () => {
    process.stdout.write(`listening ${http.address().port}\n`);
  });
}
