import { existsSync, readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import {
  closedWithin,
  dripUntilClosed,
  HANG_GUARD_MS,
  type RawClient,
  rawClient,
} from "../../test/support/slow-peer.js";
import {
  type LivePage,
  type LivePageOptions,
  serveLivePage,
  VIEW_LIVE_MAX_CONNECTIONS,
} from "./view-live-page.js";

const pages: LivePage[] = [];

afterEach(async () => {
  await Promise.all(pages.splice(0).map((p) => p.close()));
});

/** A page server whose stream sends one message and then holds the connection open. */
async function start(options: LivePageOptions = {}) {
  const streams = new Set<ServerResponse>();
  const page = await serveLivePage(
    {
      current: () => undefined,
      watch: (res) => {
        streams.add(res);
        res.write("data: {}\n\n");
      },
    },
    "run_x (live)",
    options,
  );
  pages.push(page);
  const path = new URL(page.url).pathname;
  return { page, path, streams };
}

/** Resolves once `client` has received `text`; rejects after the hang guard. */
async function receivedWithin(client: RawClient, text: string): Promise<void> {
  const until = Date.now() + HANG_GUARD_MS;
  while (!client.received().includes(text)) {
    if (Date.now() > until) throw new Error(`never received ${JSON.stringify(text)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The page's status, asked again while the server still counts a connection just closed. */
async function pageStatus(url: string): Promise<number> {
  const until = Date.now() + HANG_GUARD_MS;
  for (;;) {
    try {
      return (await fetch(url)).status;
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

describe("eddy view --live's page server", () => {
  it("serves the page and its stream under the random path, 404 elsewhere", async () => {
    const { page, path } = await start();
    const html = await fetch(page.url);
    expect(html.status).toBe(200);
    expect(await html.text()).toContain("run_x (live)");
    expect((await fetch(`http://127.0.0.1:${page.port}/`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${page.port}${path}../etc/passwd`)).status).toBe(404);
    expect(VIEW_LIVE_MAX_CONNECTIONS).toBe(64);
  });

  it("holds at most maxConnections: one more is closed as it comes, unanswered, the streams going on; then the page is served", async () => {
    const { page, path, streams } = await start({ maxConnections: 3 });
    const held = [rawClient(page.port), rawClient(page.port), rawClient(page.port)];
    for (const client of held) client.socket.write(`GET ${path}events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    for (const client of held) await receivedWithin(client, "data: {}");
    const extra = rawClient(page.port);
    extra.socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    await closedWithin(extra.closed, "the connection past the bound");
    expect(extra.received()).toBe("");
    // The streams held go on.
    for (const res of streams) res.write("data: more\n\n");
    for (const client of held) await receivedWithin(client, "data: more");
    // One goes: the page is served again.
    held[0]?.socket.destroy();
    expect(await pageStatus(page.url)).toBe(200);
    for (const client of held) client.socket.destroy();
  });

  it("many slow peers: past the bound they are closed as they come; those held get a 408 at the headers' deadline; then the page is served", async () => {
    const { page, path } = await start({ maxConnections: 8, timeouts: { headersMs: 300, requestMs: 600 } });
    const peers = Array.from({ length: 40 }, () => rawClient(page.port));
    await Promise.all(
      peers.map((peer) => dripUntilClosed(peer, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: `, "a")),
    );
    const answers = peers.map((p) => p.received().split("\r\n", 1)[0]);
    const cut = answers.filter((a) => a === "HTTP/1.1 408 Request Timeout").length;
    expect(cut).toBeGreaterThanOrEqual(1);
    expect(cut).toBeLessThanOrEqual(8);
    expect(answers.filter((a) => a === "").length).toBe(40 - cut);
    expect(await pageStatus(page.url)).toBe(200);
  });
});

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The files of src/ that `start` imports statically, itself included, transitively. */
function staticImports(start: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file) || !existsSync(file)) return; // generated code is JavaScript
    seen.add(file);
    const text = readFileSync(file, "utf8");
    // Static imports and re-exports only: an `await import()` loads on use, `import type` never.
    for (const m of text.matchAll(/^(?:import|export)\s(?!type\s)[^;]*?from\s*"(\.{1,2}\/[^"]+)"/gm))
      visit(resolve(dirname(file), (m[1] as string).replace(/\.js$/, ".ts")));
  };
  visit(start);
  return [...seen].map((f) => relative(SRC, f));
}

describe("what --live loads", () => {
  it("the page server and the command load nothing of the mock (its handler, scenarios, WebSocket sessions)", () => {
    for (const entry of ["cli/view-live-page.ts", "cli/view-live.ts"]) {
      const files = staticImports(join(SRC, entry));
      expect(files).toContain("util/http-server.ts");
      expect(files.filter((f) => f.startsWith("mock/"))).toEqual([]);
    }
  });
});
