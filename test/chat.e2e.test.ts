/**
 * `eddy chat` in a real terminal (tmux, test/support/tmux.ts): the demo model remembers a name
 * across turns and `eddy threads` lists the session; against a scripted mock whose first answer is
 * a slow shell call, Ctrl-C cancels the turn and the session takes another message; `/undo`
 * restores what a turn wrote and refuses once the file changed since. `eddy undo TAPE` refuses a
 * hostile tape with one line (exit 2). Every wait is for screen content; timeouts only guard hangs.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createThreadStore } from "../src/context/threads.js";
import { createMockServer, type MockServer } from "../src/mock/index.js";
import type { Scenario } from "../src/mock/scenario.js";
import { BIN, cleanEnv, runCli } from "./support/cli.js";
import { until } from "./support/cli-process.js";
import { HAS_TMUX, runInTmux, type TmuxRun } from "./support/tmux.js";

let server: MockServer | undefined;
let term: TmuxRun | undefined;
afterEach(async () => {
  term?.close();
  term = undefined;
  await server?.close();
  server = undefined;
});

const env = () => cleanEnv({ NO_COLOR: "1", TERM: "xterm" });
const workspace = () => mkdtempSync(join(tmpdir(), "eddy-chat-"));

async function serve(scenario: Scenario): Promise<string> {
  server = await createMockServer({ scenario });
  return server.url;
}

/** A mock whose first turn calls the shell with `command`, and whose second answers `text`. */
function shellThenSay(command: string, text: string): Promise<string> {
  return serve({
    turns: [
      { items: [{ type: "function_call", name: "shell", arguments: { command }, call_id: "call_s" }] },
      { items: [{ type: "message", text }] },
    ],
  });
}

/**
 * `eddy chat` in a terminal against `url` (shell allowed, approvals auto, `extra` flags), once its
 * first turn is running the mock's slow shell call (`sleep 300`).
 */
async function chatInSlowTurn(url: string, cwd: string, ...extra: string[]): Promise<TmuxRun> {
  const run = runInTmux(
    ["chat", "--base-url", url, "--model", "m", "--allow-shell", "--approve", "auto", ...extra],
    { cwd, env: env() },
  );
  term = run;
  await run.waitFor("/help for commands");
  run.line("run something slow");
  await run.waitFor("sleep 300");
  return run;
}

/** The frames of a thread's one tape in `cwd` (its header first). */
function onlyTapeOf(cwd: string, thread: string): { type: string; [key: string]: unknown }[] {
  const dir = join(cwd, ".eddy", "tapes", thread);
  const tapes = readdirSync(dir).filter((n) => n.endsWith(".tape"));
  expect(tapes).toHaveLength(1);
  return readFileSync(join(dir, tapes[0] as string), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { type: string });
}

describe.skipIf(!HAS_TMUX)("eddy chat in a terminal", { timeout: 240_000 }, () => {
  it("remembers what the user said across turns (demo model); /exit leaves; eddy threads lists the session", async () => {
    const cwd = workspace();
    term = runInTmux(["chat"], { cwd, env: env() });
    await term.waitFor("/help for commands");
    term.line("My name is Ada.");
    await term.waitFor("✓ completed");
    term.line("What is my name?");
    await term.waitFor("✓ completed", { count: 2 });
    expect(term.screen()).toMatch(/What is my name\?[\s\S]*Ada/);
    term.line("/exit");
    expect(await term.exited()).toBe(0);
    const thread = /thread (chat-[\w-]+)/.exec(term.screen())?.[1] as string;
    const listed = await runCli(["threads"], { cwd });
    expect(listed.stdout).toMatch(new RegExp(`${thread}\\s+2\\s`));
    // Every turn is a tape.
    expect(readdirSync(join(cwd, ".eddy", "tapes", thread))).toHaveLength(2);
  });

  it("Ctrl-D (or Ctrl-C twice) at the prompt leaves on a line of its own: the shell's prompt does not land after `›`", async () => {
    for (const ctrlC of [false, true]) {
      term?.close();
      term = runInTmux(["chat"], { cwd: workspace(), env: env() });
      await term.waitFor("/help for commands");
      if (ctrlC) {
        term.keys("C-c");
        await term.waitFor("Ctrl-C again or Ctrl-D to leave");
        term.keys("C-c");
      } else term.keys("C-d");
      expect(await term.exited()).toBe(0);
      expect(term.screen()).toMatch(/^› *\n+EXITED=0$/m);
    }
  });

  it("Ctrl-Z at the prompt, then fg: the prompt takes input again (it stayed paused, raw and deaf to every key)", async () => {
    const cwd = workspace();
    term = runInTmux(["chat"], { cwd, env: env(), jobControl: true });
    await term.waitFor("/help for commands");
    term.keys("C-z");
    await term.waitFor("Stopped");
    term.line("fg");
    await new Promise((r) => setTimeout(r, 300));
    term.line("My name is Ada.");
    await term.waitFor("✓ completed");
    term.line("/exit now");
    // The chat left once bash shows its prompt again: the last line of the screen.
    await until(
      () => term?.screen().trimEnd().endsWith("$") === true,
      "the shell prompt after the chat",
      30_000,
    );
    term.line('echo "EXITED=$?"');
    expect(await term.exited()).toBe(0);
  });

  it("Ctrl-C cancels a turn running a slow shell call; the session stays and takes another message", async () => {
    term = await chatInSlowTurn(await shellThenSay("sleep 300", "Still here."), workspace());
    term.keys("C-c");
    await term.waitFor("cancelled");
    term.line("are you there?");
    await term.waitFor("Still here.");
    term.line("/exit");
    expect(await term.exited()).toBe(0);
  });

  it("a message typed during a turn is still sent when Ctrl-C cancels that turn; Ctrl-C again would drop it", async () => {
    // The cancelled turn asks nothing more: the next request is the queued message's.
    term = await chatInSlowTurn(await shellThenSay("sleep 300", "Here is the queued answer."), workspace());
    term.line("and then this");
    await term.waitFor("queued: sent when this turn ends");
    term.keys("C-c");
    // It used to drop the queued message here, though --help says it is sent when the turn ends.
    await term.waitFor("(1 queued message still follows: Ctrl-C again drops it)");
    await term.waitFor("Here is the queued answer.");
    term.line("/exit");
    expect(await term.exited()).toBe(0);
  });

  it("Ctrl-D during a turn leaves once it ends; Ctrl-C then still cancels it, and its tape ends", async () => {
    const cwd = workspace();
    term = await chatInSlowTurn(await shellThenSay("sleep 300", "never"), cwd, "--thread", "d");
    term.keys("C-d");
    await term.waitFor("leaving once this turn ends (Ctrl-C cancels it)");
    term.keys("C-c");
    // It used to be killed here (exit 130), the turn's tape without its run_ended.
    expect(await term.exited()).toBe(0);
    expect(onlyTapeOf(cwd, "d").at(-1)).toMatchObject({ type: "run_ended", reason: "cancelled" });
  });

  it("the terminal closing during a turn (SIGHUP) cancels and records it, as SIGTERM does", async () => {
    const cwd = workspace();
    term = await chatInSlowTurn(await shellThenSay("sleep 300", "never"), cwd, "--thread", "hup");
    term.close();
    // It used to die at once, the turn's tape without its run_ended.
    const ended = () => {
      const last = onlyTapeOf(cwd, "hup").at(-1);
      return last?.type === "run_ended" ? last : undefined;
    };
    await until(() => ended() !== undefined, "the turn's tape to end", 30_000);
    expect(ended()).toMatchObject({ type: "run_ended", reason: "cancelled" });
  });

  it("Ctrl-D at an approval prompt answers it with no answer, and the chat leaves once the turn ends", async () => {
    const url = await shellThenSay("echo hi", "Not run, then.");
    const cwd = workspace();
    term = runInTmux(["chat", "--base-url", url, "--model", "m", "--allow-shell", "--thread", "ask"], {
      cwd,
      env: env(),
    });
    await term.waitFor("/help for commands");
    term.line("run echo");
    await term.waitFor("Allow");
    term.keys("C-d");
    // It used to wait for the prompt's answer forever.
    expect(await term.exited()).toBe(0);
    const frames = onlyTapeOf(cwd, "ask");
    expect(frames.find((f) => f.type === "approval_decided")?.decision).toBe("deny");
    expect(frames.at(-1)?.type).toBe("run_ended");
  });

  it("/undo restores the file a turn wrote, and refuses once the file changed since", async () => {
    const write = (content: string, id: string) => ({
      items: [
        {
          type: "function_call" as const,
          name: "write_file",
          arguments: { path: "notes.txt", content },
          call_id: id,
        },
      ],
    });
    const url = await serve({
      turns: [
        write("new\n", "w1"),
        { items: [{ type: "message", text: "Written." }] },
        write("newer\n", "w2"),
        { items: [{ type: "message", text: "Written again." }] },
      ],
    });
    const cwd = workspace();
    writeFileSync(join(cwd, "notes.txt"), "old\n");
    term = runInTmux(["chat", "--base-url", url, "--model", "m", "--allow-write", "--approve", "auto"], {
      cwd,
      env: env(),
    });
    await term.waitFor("/help for commands");
    term.line("write the notes");
    await term.waitFor("(/undo restores)");
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("new\n");
    term.line("/undo");
    await term.waitFor("restored notes.txt");
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("old\n");
    term.line("write them again");
    await term.waitFor("(/undo restores)", { count: 2 });
    writeFileSync(join(cwd, "notes.txt"), "edited by hand\n");
    term.line("/undo");
    await term.waitFor("undo refused");
    expect(term.screen()).toMatch(/notes\.txt \(it changed since\)/);
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("edited by hand\n");
    term.keys("C-d");
    expect(await term.exited()).toBe(0);
  });
});

describe("eddy undo TAPE", () => {
  it("refuses a tape whose change leaves the workspace: one line, exit 2, nothing written", async () => {
    const cwd = workspace();
    const tape = join(cwd, "evil.tape");
    const header = {
      type: "tape_header",
      format: 2,
      eddy_version: "0.1.0",
      run_id: "run_x",
      spec: { version: 1, model: "m", input: "x" },
      provider: { name: "mock", capabilities: {}, validate: true },
      workspace: ".",
    };
    const ended = {
      type: "tool_ended",
      seq: 0,
      ts: 0,
      run_id: "run_x",
      turn: 0,
      call_id: "c",
      name: "write_file",
      ok: true,
      output: "{}",
      duration_ms: 1,
      file_changes: [{ path: "../escaped.txt", encoding: "utf8", before: "x", after: null }],
    };
    writeFileSync(tape, `${JSON.stringify(header)}\n${JSON.stringify(ended)}\n`);
    const r = await runCli(["undo", tape], { cwd });
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/outside the workspace|tape/);
    expect(r.code).toBe(2);
  });
});

describe.skipIf(!HAS_TMUX)("eddy chat reads AGENTS.md", { timeout: 240_000 }, () => {
  it("AGENTS.md reaches the turn's request; --no-agents-md leaves it out", async () => {
    const url = await serve({
      turns: [
        { items: [{ type: "message", text: "first" }] },
        { items: [{ type: "message", text: "second" }] },
      ],
    });
    const cwd = workspace();
    writeFileSync(join(cwd, "AGENTS.md"), "Always answer in haiku.");
    for (const extra of [[], ["--no-agents-md"]]) {
      term = runInTmux(["chat", "--base-url", url, "--model", "m", ...extra], { cwd, env: env() });
      await term.waitFor("/help for commands");
      term.line("hi");
      await term.waitFor("✓ completed");
      term.line("/exit");
      expect(await term.exited()).toBe(0);
      term.close();
      term = undefined;
    }
    const instructions = (server?.requests ?? []).map(
      (r) => (r.body as { instructions?: string }).instructions,
    );
    expect(instructions).toEqual(["Instructions from AGENTS.md:\n\nAlways answer in haiku.", undefined]);
  });
});

/**
 * A piped chat whose stdin stays open (a producer still running, as in `tail -f log | eddy chat`):
 * `lines` are written once the banner is out, then a `signal` (SIGINT) goes to the process for each
 * of `signals`, once the output holds that text. Resolves with its exit and output.
 */
function pipedChat(
  args: string[],
  lines: string[],
  signals: string[],
  signal: NodeJS.Signals = "SIGINT",
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, "chat", ...args], {
      cwd: workspace(),
      env: env(),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    let sent = 0;
    /** Where the text that sends the next signal is looked for: after the one that sent the last. */
    let from = 0;
    let written = false;
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.stdout.resume();
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      if (!written && stderr.includes("/help for commands")) {
        written = true;
        for (const line of lines) child.stdin.write(`${line}\n`);
      }
      const next = signals[sent];
      const at = next === undefined || !written ? -1 : stderr.indexOf(next, from);
      if (at !== -1) {
        from = at + (next as string).length;
        sent++;
        child.kill(signal);
      }
    });
    child.stdin.on("error", () => {});
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe("eddy chat on a pipe that stays open", { timeout: 120_000 }, () => {
  it("Ctrl-C at the prompt twice leaves without a stack trace (the second used to throw in the signal handler)", async () => {
    const r = await pipedChat(["--model", "m"], [], ["› ", "Ctrl-C again or Ctrl-D to leave"]);
    expect(r.stderr).not.toMatch(/TypeError|ERR_INVALID_ARG_TYPE|\n\s+at /);
    expect(r.stderr).toContain("(Ctrl-C again or Ctrl-D to leave)");
    expect(r.code).toBe(0); // leaving the way the prompt says is not a failure
  });

  it("SIGTERM at the prompt ends the chat with 130 (it was taken for a Ctrl-C and the chat stayed)", async () => {
    const r = await pipedChat(["--model", "m"], [], ["› "], "SIGTERM");
    expect(r.code).toBe(130);
    expect(r.stderr).not.toContain("Ctrl-C again");
  });

  it("a piped /exit comes after the messages before it: they are sent, not cancelled", async () => {
    const cwd = workspace();
    const r = await runCli(["chat", "--thread", "script"], {
      cwd,
      env: env(),
      stdin: "My name is Ada.\n/exit\n",
      timeoutMs: 60_000,
    });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toMatch(/cancell/);
    const shown = await runCli(["threads", "show", "script", "--json"], { cwd, env: env() });
    const log = JSON.parse(shown.stdout) as { runs: { outcome?: { reason: string } }[] };
    expect(log.runs.map((run) => run.outcome?.reason)).toEqual(["completed"]);
  });

  it("what the user typed reaches the terminal inert; a /decide refusal is said (it was dropped)", async () => {
    const esc = "\u001b";
    const r = await pipedChat(
      ["--model", "m"],
      [`/model ab${esc}]0;PWNED\u0007`, `/zz${esc}[2Jx`, "/decide nobody=allow", "/exit"],
      [],
    );
    expect(r.stderr).not.toContain(esc);
    expect(r.stderr).toMatch(/the model name "ab\\u001b\]0;PWNED\\u0007" holds control characters/);
    expect(r.stderr).toMatch(/unknown command \/zz.*x \(\/help lists them\)/);
    expect(r.stderr).toContain("eddy: no call is waiting for a decision");
  });
});

describe("eddy chat shows what the model named inert", { timeout: 120_000 }, () => {
  it("a call id and a file name holding escape sequences reach the terminal without them", async () => {
    const esc = "\u001b";
    const url = await serve({
      turns: [
        {
          items: [
            {
              type: "function_call",
              name: "write_file",
              arguments: { path: `a${esc}]0;PWNED\u0007${esc}[31mred.txt`, content: "x" },
              call_id: `c${esc}[2J${esc}]52;c;Y3VybCBldmls\u0007`,
            },
          ],
        },
        { items: [{ type: "message", text: "done" }], repeat: true },
      ],
    });
    const cwd = workspace();
    const args = ["chat", "--base-url", url, "--model", "m", "--allow-write", "--approve", "defer"];
    const deferred = await runCli([...args, "--thread", "t"], {
      cwd,
      env: env(),
      stdin: "write it\n",
      timeoutMs: 60_000,
    });
    expect(deferred.stderr).toContain("waiting for a decision on c");
    expect(deferred.stderr).not.toContain(esc);
    // The next chat on the thread decides it: the file is written, and the line naming it is inert.
    const decided = await runCli([...args, "--thread", "t"], {
      cwd,
      env: env(),
      stdin: "/decide all=allow\n/exit\n",
      timeoutMs: 60_000,
    });
    expect(decided.stderr).toMatch(/changed a.*red\.txt \(\/undo restores\)/);
    expect(decided.stderr).not.toContain(esc);
  });

  it("a call waiting for /decide is shown whole, in the turn that deferred it and in a later chat", async () => {
    // Past the 160 characters the one-line view showed: the part that matters comes last.
    const command = `echo ${"harmless ".repeat(30)}; touch late-payload`;
    const url = await serve({
      turns: [
        { items: [{ type: "function_call", name: "shell", arguments: { command }, call_id: "k9" }] },
        { items: [{ type: "message", text: "done" }], repeat: true },
      ],
    });
    const cwd = workspace();
    const args = [
      "chat",
      "--base-url",
      url,
      "--model",
      "m",
      "--allow-shell",
      "--approve",
      "defer",
      "--thread",
      "t",
    ];
    const deferred = await runCli(args, { cwd, env: env(), stdin: "go\n", timeoutMs: 60_000 });
    expect(deferred.stderr).toMatch(
      / {2}k9: shell\n {4}\$ echo harmless[\s\S]*; touch late-payload\n[\s\S]*waiting for a decision on k9/,
    );
    const later = await runCli(args, { cwd, env: env(), stdin: "/exit\n", timeoutMs: 60_000 });
    expect(later.stderr).toMatch(
      / {2}k9: shell\n {4}\$ echo harmless[\s\S]*; touch late-payload\n {2}\/decide k9=allow/,
    );
  });

  it("a sub-agent's call waiting for /decide is shown whole too, under its AGENT_CALL/SUB_CALL id", async () => {
    const url = await serve({
      turns: [
        {
          items: [{ type: "function_call", name: "scribe", arguments: { input: "write it" }, call_id: "pa" }],
        },
        {
          items: [
            {
              type: "function_call",
              name: "write_file",
              arguments: { path: "s.txt", content: "from the sub-agent" },
              call_id: "sb",
            },
          ],
        },
        { items: [{ type: "message", text: "done" }], repeat: true },
      ],
    });
    const cwd = workspace();
    // `agents` needs no trust: a workspace's file may offer them (they select among the run's tools).
    writeFileSync(
      join(cwd, "eddy.config.json"),
      JSON.stringify({ agents: { scribe: { instructions: "Write.", tools: ["write_file"] } } }),
    );
    const args = [
      "chat",
      "--base-url",
      url,
      "--model",
      "m",
      "--allow-write",
      "--approve",
      "defer",
      "--thread",
      "t",
    ];
    const deferred = await runCli(args, { cwd, env: env(), stdin: "go\n", timeoutMs: 60_000 });
    expect(deferred.stderr).toMatch(
      / {2}pa\/sb: write_file\n {4}--- \/dev\/null\n {4}\+\+\+ s\.txt\n[\s\S]*\+from the sub-agent/,
    );
    const later = await runCli(args, { cwd, env: env(), stdin: "/exit\n", timeoutMs: 60_000 });
    expect(later.stderr).toMatch(/ {2}pa\/sb: write_file\n {4}--- \/dev\/null\n[\s\S]*\+from the sub-agent/);
  });
});

describe("eddy chat records what /approve changed", { timeout: 120_000 }, () => {
  it("a turn after /approve auto has approve auto in its tape's policy (it had the session's first mode)", async () => {
    const cwd = workspace();
    const r = await runCli(["chat", "--approve", "deny", "--thread", "modes"], {
      cwd,
      env: env(),
      stdin: "/approve auto\nhello\n",
      timeoutMs: 60_000,
    });
    expect(r.code).toBe(0);
    const [header] = onlyTapeOf(cwd, "modes");
    expect(header?.policy).toMatchObject({ approve: "auto" });
  });
});

describe("a piped eddy chat's exit code", { timeout: 120_000 }, () => {
  it("is a failed turn's, as eddy run's would be; 0 when every turn completed", async () => {
    const url = await serve({
      turns: [
        { items: [{ type: "message", text: "fine" }] },
        {
          items: [{ type: "message", text: "broken" }],
          status: "failed",
          error: { code: "server_error", message: "boom" },
        },
      ],
    });
    const args = ["chat", "--base-url", url, "--model", "m", "--max-retries", "0"];
    const ok = await runCli(args, { cwd: workspace(), env: env(), stdin: "one\n", timeoutMs: 60_000 });
    expect(ok.code).toBe(0);
    // The mock goes on with its next turn: this chat's message gets the failed response.
    const failed = await runCli(args, { cwd: workspace(), env: env(), stdin: "two\n", timeoutMs: 60_000 });
    expect(failed.stderr).toMatch(/boom/);
    expect(failed.code).toBe(1);
  });
});

describe("one conversation at a time on a thread", { timeout: 120_000 }, () => {
  it("a chat on a thread another process holds is refused before its prompt; a run waits for it, then runs", async () => {
    const cwd = workspace();
    const hold = await createThreadStore({ workspace: cwd }).hold("k1", "eddy chat");
    const chat = await runCli(["chat", "--thread", "k1"], {
      cwd,
      env: env(),
      stdin: "My name is Bob.\n",
      timeoutMs: 60_000,
    });
    expect(chat.code).toBe(2);
    expect(chat.stderr).toMatch(/thread k1 is in use by another "eddy chat", process \d+/);
    // A run waits, saying so once, and runs once the thread is let go.
    const run = spawn(process.execPath, [BIN, "run", "--thread", "k1", "My name is Bob."], {
      cwd,
      env: env(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    run.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    run.stdout.resume();
    const exited = new Promise<number | null>((resolve) => run.on("close", resolve));
    await until(() => stderr.includes("waiting for thread k1"), "the run's wait");
    expect((await createThreadStore({ workspace: cwd }).read("k1")).runs).toEqual([]);
    await hold.release();
    expect(await exited).toBe(0);
    expect(stderr.split("waiting for thread k1")).toHaveLength(2);
    expect((await createThreadStore({ workspace: cwd }).read("k1")).runs).toHaveLength(1);
    // The run let the thread go when it ended.
    await (await createThreadStore({ workspace: cwd }).hold("k1", "test")).release();
  });
});

describe("a later chat on a thread whose last run waits for a decision", { timeout: 120_000 }, () => {
  it("shows the waiting call as its tape recorded it; /decide continues that run, and the thread's log says how it ended", async () => {
    const cwd = workspace();
    const args = ["chat", "--thread", "ap1", "--allow-write"];
    const first = await runCli(args, {
      cwd,
      env: env(),
      stdin: "/approve defer\nCreate a file named c.txt containing the text deferred\n",
      timeoutMs: 60_000,
    });
    expect(first.stderr).toMatch(/waiting for a decision on call_mock_0001/);
    expect(existsSync(join(cwd, "c.txt"))).toBe(false);
    // A chat that does not allow writes: /decide is refused by the policy, said once, nothing written.
    const readOnly = await runCli(["chat", "--thread", "ap1"], {
      cwd,
      env: env(),
      stdin: "/decide call_mock_0001=allow\n",
      timeoutMs: 60_000,
    });
    expect(readOnly.stderr.split("write_file needs --allow-write")).toHaveLength(2);
    expect(existsSync(join(cwd, "c.txt"))).toBe(false);
    const second = await runCli(args, {
      cwd,
      env: env(),
      stdin: "/decide call_mock_0001=allow\n",
      timeoutMs: 60_000,
    });
    // The call shown as the approval prompt would show it: the diff of what it writes.
    expect(second.stderr).toMatch(
      /the thread's last run \(run_\w+\) waits for decisions on this call \(tape \.eddy\/tapes\/ap1\/run_\w+\.tape\):\n {2}call_mock_0001: write_file\n {4}--- \/dev\/null\n {4}\+\+\+ c\.txt\n(?: {4}.*\n)*? {4}\+deferred\n(?: {4}.*\n)* {2}\/decide call_mock_0001=allow\|deny/,
    );
    expect(readFileSync(join(cwd, "c.txt"), "utf8")).toBe("deferred");
    const log = await createThreadStore({ workspace: cwd }).read("ap1");
    expect(log.runs.map((r) => r.outcome?.reason)).toEqual(["completed"]);
    // Decided: a third chat has nothing waiting.
    const third = await runCli(args, { cwd, env: env(), stdin: "", timeoutMs: 60_000 });
    expect(third.stderr).not.toMatch(/waits for decisions/);
  });
});
