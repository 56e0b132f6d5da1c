/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: the ${VAR} syntax of mcp_servers is under test */
import { describe, expect, it } from "vitest";
import { parseMcpFlag, parseMcpServers, splitWords } from "./config.js";
import { createMcpTools } from "./mcp-tools.js";
import { type ResolveOptions, resolveMcpServer } from "./resolve.js";

describe("parseMcpServers", () => {
  it("accepts the Codex and Claude Code shapes", () => {
    const servers = {
      fs: { command: "npx", args: ["-y", "server-filesystem", "."], env: { A: "1" }, cwd: "sub" },
      claude: { type: "stdio", command: "srv" },
      gh: { type: "http", url: "https://api.example.com/mcp", headers: { Authorization: "Bearer ${T}" } },
      codex: {
        url: "http://127.0.0.1:9/mcp",
        bearer_token_env_var: "T",
        tool_timeout_sec: 5,
        startup_timeout_sec: 2,
      },
    };
    expect(parseMcpServers(servers)).toEqual(servers);
  });

  it.each([
    [
      "not an object",
      [],
      "mcp_servers must be an object of NAME: {command, args?, env?, cwd?} | {url, headers?}",
    ],
    [
      "a server without command or url",
      { s: { args: [] } },
      "mcp_servers.s needs either command (a stdio server) or url (a Streamable HTTP server)",
    ],
    [
      "both command and url",
      { s: { command: "a", url: "http://x" } },
      "mcp_servers.s: give either command (stdio) or url (HTTP), not both",
    ],
    [
      "args that are not strings",
      { s: { command: "a", args: [1] } },
      "mcp_servers.s.args.0: Invalid input: expected string, received number",
    ],
    [
      "a header that is not a string",
      { s: { url: "http://x", headers: { A: 1 } } },
      "mcp_servers.s.headers.A: Invalid input: expected string, received number",
    ],
    [
      "a URL without http",
      { s: { url: "ftp://x" } },
      "mcp_servers.s.url: must start with http:// or https://",
    ],
    [
      "an unknown key",
      { s: { command: "a", enabled_tools: [] } },
      'mcp_servers.s: unknown key "enabled_tools" (a stdio server takes command, args, env, cwd, startup_timeout_sec, tool_timeout_sec)',
    ],
    [
      "the legacy SSE transport",
      { s: { type: "sse", url: "http://x" } },
      'mcp_servers.s: the legacy HTTP+SSE transport is not supported; use the server\'s Streamable HTTP endpoint (type "http")',
    ],
    [
      "a negative timeout",
      { s: { command: "a", tool_timeout_sec: -1 } },
      "mcp_servers.s.tool_timeout_sec: Too small: expected number to be >0",
    ],
  ])("refuses %s, naming the field", (_label, value, message) => {
    expect(() => parseMcpServers(value)).toThrow(message);
  });

  it("refuses a server named __proto__ (an object would drop it), and takes constructor and toString as names", () => {
    const parsed = JSON.parse('{"__proto__":{"command":"a"},"ok":{"command":"b"}}') as unknown;
    expect(() => parseMcpServers(parsed)).toThrow(
      'mcp_servers.__proto__: "__proto__" cannot name an MCP server (JavaScript reserves it); rename the server',
    );
    const members = parseMcpServers(
      JSON.parse('{"constructor":{"command":"a"},"toString":{"url":"http://x"}}'),
    );
    expect(Object.keys(members)).toEqual(["constructor", "toString"]);
    expect(members.toString).toEqual({ url: "http://x" });
  });
});

describe("MCP server names and the SERVER__TOOL split", () => {
  it.each(["a__b", "__x", "x_", "_x", "a..b", "_"])(
    "refuses %j: its tools would be split at another place and checked against another server, or none",
    (name) => {
      expect(() => parseMcpServers({ [name]: { command: "a" } })).toThrow(
        /may not hold "__" or start or end with "_" \(its tools are named SERVER__TOOL\)/,
      );
      expect(() => parseMcpFlag(`${name}=srv`)).toThrow(/may not hold "__"/);
    },
  );

  it.each(["github", "my_server", "a-b", "docs2"])("takes %j", (name) => {
    expect(Object.keys(parseMcpServers({ [name]: { command: "a" } }))).toEqual([name]);
  });
});

describe("MCP server names and configuration order (docs/pitfalls.md #123)", () => {
  const server = { command: "a" };
  /** A config file's `mcp_servers` as JSON.parse gives it: names in the order the text writes them. */
  const written = (names: string[]) =>
    JSON.parse(
      `{${names.map((n) => `${JSON.stringify(n)}:${JSON.stringify(server)}`).join(",")}}`,
    ) as unknown;

  it.each(["1", "20", "0", "01", "4294967295", "12345678901234567890"])(
    'refuses %j, digits only (an object lists names like "1" and "20" before those written above them)',
    (name) => {
      // Before: {"b", "20", "a", "1"} was taken as 1, 20, b, a.
      const message = `mcp_servers.${name}: an MCP server's name may not be digits only (JavaScript would put it before the other servers, not where it is written); rename the server, e.g. "s${name}"`;
      expect(() => parseMcpServers(written(["b", name, "a"]))).toThrow(message);
      expect(() => parseMcpFlag(`${name}=srv`)).toThrow(
        `--mcp ${name}: an MCP server's name may not be digits only`,
      );
    },
  );

  it("keeps the written order of names that look like numbers but are not digits only", () => {
    const names = ["b", "-1", "1.5", "1a", "a1", "1e3", "a\u00071", "z"];
    expect(Object.keys(parseMcpServers(written(names)))).toEqual(names);
    expect(parseMcpFlag("-1=srv").name).toBe("-1");
  });

  it("hostile names: __proto__ and control characters around digits are still refused by their own rules", () => {
    expect(() => parseMcpServers(written(["b", "__proto__"]))).toThrow(
      /"__proto__" cannot name an MCP server/,
    );
    // "\u001b1" and "1\n" are not digits only; sanitized they start or end with "_".
    expect(() => parseMcpServers(written(["\u001b1"]))).toThrow(/may not hold "__" or start or end with "_"/);
    expect(() => parseMcpServers(written(["1\n"]))).toThrow(/may not hold "__" or start or end with "_"/);
  });

  it("a library caller's object is checked the same way (createMcpTools)", () => {
    expect(() => createMcpTools({ b: server, 1: server }, { env: {} })).toThrow(
      /mcp_servers\.1: an MCP server's name may not be digits only/,
    );
  });
});

describe("parseMcpFlag", () => {
  it.each([
    [
      "fs=npx -y @modelcontextprotocol/server-filesystem .",
      "fs",
      { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."] },
    ],
    ["one=srv", "one", { command: "srv" }],
    [
      `q=python -c 'print("a b")' "x y" z\\ w`,
      "q",
      { command: "python", args: ["-c", 'print("a b")', "x y", "z w"] },
    ],
    ["web=https://example.com/mcp", "web", { url: "https://example.com/mcp" }],
  ])("%s", (spec, name, config) => {
    expect(parseMcpFlag(spec)).toEqual({ name, config });
  });

  it.each([["fs"], ["=npx"], ["fs="], ["fs='unclosed"]])("refuses %s", (spec) => {
    expect(() => parseMcpFlag(spec)).toThrow(/--mcp/);
  });

  it("refuses the server name __proto__", () => {
    expect(() => parseMcpFlag("__proto__=srv")).toThrow(
      '--mcp __proto__: "__proto__" cannot name an MCP server (JavaScript reserves it); rename the server',
    );
  });

  it("splitWords keeps empty quoted words", () => {
    expect(splitWords(`a "" 'b'"c"`, "x")).toEqual(["a", "", "bc"]);
  });
});

describe("resolveMcpServer", () => {
  const base: ResolveOptions = { env: {}, cwd: "/work", startupTimeoutMs: 1000, callTimeoutMs: 2000 };

  it("expands ${VAR} and ${VAR:-default} in a stdio server and inherits only the allowlist", () => {
    const { server, secrets } = resolveMcpServer(
      "s",
      {
        command: "${BIN}/srv",
        args: ["--db", "${DB:-local.db}"],
        env: { API_TOKEN: "${TOKEN}", MODE: "fast" },
        cwd: "sub",
      },
      {
        ...base,
        env: {
          BIN: "/opt/bin",
          TOKEN: "secret-token-value",
          PATH: "/usr/bin",
          LC_ALL: "C",
          OPENAI_API_KEY: "sk-nope-nope",
        },
      },
    );
    expect(server).toEqual({
      name: "s",
      transport: "stdio",
      command: "/opt/bin/srv",
      args: ["--db", "local.db"],
      env: { LC_ALL: "C", PATH: "/usr/bin", API_TOKEN: "secret-token-value", MODE: "fast" },
      cwd: "/work/sub",
      startupTimeoutMs: 1000,
      callTimeoutMs: 2000,
    });
    expect(secrets).toEqual(["secret-token-value", "/opt/bin"]);
  });

  it("treats every expanded value of 8 characters or more as a secret, whatever the variable's name", () => {
    const http = resolveMcpServer(
      "h",
      { url: "https://h/mcp?access=${GH_PAT}&n=${N}" },
      { ...base, env: { GH_PAT: "github_pat_11AAAA", N: "1" } },
    );
    expect(http.secrets).toEqual(["github_pat_11AAAA"]);
    const stdio = resolveMcpServer(
      "s",
      { command: "srv", args: ["--key", "${MY_PLAIN}", "--verbose=${V}"] },
      { ...base, env: { MY_PLAIN: "plain-but-private", V: "true" } },
    );
    expect(stdio.secrets).toEqual(["plain-but-private"]);
    // The home folder or PATH is no secret: masking it would turn every path under it into ***.
    const paths = resolveMcpServer(
      "p",
      { command: "${HOME}/bin/srv", args: ["--dirs=${PATH}", "--cache=${XDG_CACHE_HOME}"] },
      {
        ...base,
        env: { HOME: "/home/alice", PATH: "/usr/local/bin:/usr/bin", XDG_CACHE_HOME: "/home/alice/.cache" },
      },
    );
    expect(paths.secrets).toEqual([]);
  });

  it("treats an expanded value as a secret when the variable's name looks secret", () => {
    const { secrets } = resolveMcpServer(
      "s",
      { command: "srv", env: { DSN: "postgres://u:${DB_PASSWORD}@h/db" } },
      { ...base, env: { DB_PASSWORD: "hunter2hunter2" } },
    );
    expect(secrets).toEqual(["hunter2hunter2"]);
  });

  it("collects header secrets, the bare token too, and Codex's bearer_token_env_var", () => {
    const { server, secrets } = resolveMcpServer(
      "gh",
      {
        url: "https://x/mcp",
        headers: { Authorization: "Bearer ${GH}", "X-Trace": "on" },
        tool_timeout_sec: 1.5,
      },
      { ...base, env: { GH: "ghp_abcdefgh12345" } },
    );
    expect(server).toMatchObject({
      transport: "http",
      headers: { Authorization: "Bearer ghp_abcdefgh12345", "X-Trace": "on" },
      callTimeoutMs: 1500,
    });
    expect(secrets).toEqual(["Bearer ghp_abcdefgh12345", "ghp_abcdefgh12345"]);

    const codex = resolveMcpServer(
      "c",
      { url: "https://x/mcp", bearer_token_env_var: "TOK" },
      { ...base, env: { TOK: "tok-987654321" } },
    );
    expect(codex.server).toMatchObject({ headers: { Authorization: "Bearer tok-987654321" } });
    expect(codex.secrets).toContain("tok-987654321");
  });

  it("takes user:password@ out of an HTTP server's URL: sent as Basic credentials, masked", () => {
    const { server, secrets } = resolveMcpServer(
      "h",
      { url: "http://user:hunter2pass@127.0.0.1:9/mcp" },
      base,
    );
    const basic = `Basic ${Buffer.from("user:hunter2pass").toString("base64")}`;
    expect(server).toMatchObject({
      url: "http://127.0.0.1:9/mcp",
      shownUrl: "http://user:***@127.0.0.1:9/mcp",
      headers: { Authorization: basic },
    });
    expect(secrets).toEqual(expect.arrayContaining(["hunter2pass", basic]));
    // A configured Authorization header wins.
    const own = resolveMcpServer(
      "h",
      { url: "http://user:hunter2pass@h/mcp", headers: { authorization: "Bearer own-token-1234" } },
      base,
    );
    expect(own.server).toMatchObject({ headers: { authorization: "Bearer own-token-1234" } });
    expect(own.secrets).toContain("hunter2pass");
  });

  it("refuses a reference to an unset variable, naming the field and the variable", () => {
    expect(() =>
      resolveMcpServer(
        "gh",
        { url: "https://x", headers: { Authorization: "Bearer ${GITHUB_TOKEN}" } },
        base,
      ),
    ).toThrow(
      "mcp_servers.gh.headers.Authorization refers to ${GITHUB_TOKEN}, which is not set: set it in the environment or write ${GITHUB_TOKEN:-default}",
    );
    expect(() => resolveMcpServer("c", { url: "https://x", bearer_token_env_var: "NOPE" }, base)).toThrow(
      "mcp_servers.c.bearer_token_env_var names NOPE, which is not set",
    );
  });

  it.each([
    ["a name with a line break", { "A\nB": "c" }, {}, /headers\."A\\nB": is not an HTTP header name/],
    ["a name with a space", { "X Y": "c" }, {}, /headers\."X Y": is not an HTTP header name/],
    [
      "a token with a carriage return, from a variable",
      { Authorization: "Bearer ${TOK}" },
      { TOK: "sk-secret-1234\r\nX-Evil: 1" },
      /headers\."Authorization": its value holds a control character \(U\+000D\) at position 22/,
    ],
    [
      "a value past U+00FF",
      { "X-Note": "caf\u00e9 \u2026" },
      {},
      /its value holds a character past U\+00FF at position 6/,
    ],
  ])("refuses a header fetch cannot send (%s), never showing its value", (_what, headers, env, message) => {
    let error: unknown;
    try {
      resolveMcpServer("h", { url: "https://x", headers }, { ...base, env });
    } catch (err) {
      error = err;
    }
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain("sk-secret");
    expect((error as Error).message).not.toContain("\n");
  });
});
