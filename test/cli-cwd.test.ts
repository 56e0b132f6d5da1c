import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { main } from "../src/cli/main.js";
import type { CliIo } from "../src/cli/run-command.js";
import { runMainIn } from "./support/in-process-cli.js";

/**
 * `main(argv, io)` in-process resolves every relative path it is given — a flag's (`--record`,
 * `--context`, `--schema`, `--workspace`, `--config`, `--out`, `--scenario`) or an argument's (a
 * tape, a tasks file) — against `io.cwd`, never the process's own directory: `eddy run --record
 * r.tape` in-process wrote the tape where the test runner happened to be. Each test runs with the
 * process in another folder (`elsewhere`), which must stay empty.
 */

let home = "";
let elsewhere = "";
const processCwd = process.cwd();

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "eddy-cli-cwd-"));
  elsewhere = mkdtempSync(join(tmpdir(), "eddy-cli-cwd-elsewhere-"));
  process.chdir(elsewhere);
});

afterEach(() => {
  process.chdir(processCwd);
  expect(readdirSync(elsewhere), "nothing is written where the process is").toEqual([]);
});

/** `eddy ARGS` in-process, in `home`. */
function cli(args: string[]) {
  return runMainIn(args, home);
}

/** A recorded run's tape at `home/NAME` (named absolute, so it is made where it is meant to be). */
async function recordTape(name: string): Promise<void> {
  const r = await cli(["run", "--record", join(home, name), "hi"]);
  expect(r.code, r.stderr).toBe(0);
}

function write(name: string, text: string): void {
  writeFileSync(join(home, name), text);
}

describe("eddy run: relative paths are from io.cwd", () => {
  it("--record writes the tape there", async () => {
    const r = await cli(["run", "--record", "r.tape", "hi"]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(home, "r.tape"), "utf8")).toContain('"run_ended"');
  });

  it("--context reads the tape there", async () => {
    await recordTape("c.tape");
    const r = await cli(["run", "--context", "c.tape", "hi"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("context: 1 earlier run");
  });

  it("--record naming a --context tape by another relative name is refused", async () => {
    await recordTape("c.tape");
    const before = readFileSync(join(home, "c.tape"), "utf8");
    const r = await cli(["run", "--context", "c.tape", "--record", "./c.tape", "hi"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--record ./c.tape is the --context tape c.tape");
    expect(readFileSync(join(home, "c.tape"), "utf8")).toBe(before);
  });

  it("--schema reads the schema there, named as given", async () => {
    write("s.json", JSON.stringify({ type: "object", properties: { a: { type: "string" } } }));
    const ok = await cli(["run", "--schema", "s.json", "hi"]);
    expect(ok.code, ok.stderr).toBe(0);
    const bad = await cli(["run", "--schema", "none.json", "hi"]);
    expect(bad.stderr).toBe("eddy: cannot read the --schema file none.json: ENOENT\n");
  });

  it("--workspace is there: the thread store is in it, and the thread log names the tape where it is", async () => {
    mkdirSync(join(home, "ws"));
    const r = await cli(["run", "--workspace", "ws", "--thread", "t", "--record", "t.tape", "hi"]);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(home, "t.tape"))).toBe(true);
    const log = readFileSync(join(home, "ws", ".eddy", "threads", "t.jsonl"), "utf8");
    expect(log).toContain(`"tape":${JSON.stringify(join(home, "t.tape"))}`);
  });

  it("a --record tape inside the --workspace is named in the thread log from the workspace, as it is read back", async () => {
    mkdirSync(join(home, "ws"));
    const r = await cli(["run", "--workspace", "ws", "--thread", "t", "--record", "ws/t.tape", "hi"]);
    expect(r.code, r.stderr).toBe(0);
    const log = readFileSync(join(home, "ws", ".eddy", "threads", "t.jsonl"), "utf8");
    expect(log).toContain('"tape":"t.tape"');
  });

  it("--config reads the file there", async () => {
    write("cfg.json", JSON.stringify({ instructions: "from the file" }));
    const r = await cli(["run", "--config", "cfg.json", "hi"]);
    expect(r.code, r.stderr).toBe(0);
  });
});

describe("eddy config and doctor: relative paths are from io.cwd", () => {
  it("config --config and --workspace", async () => {
    write("cfg.json", JSON.stringify({ model: "from-cfg" }));
    mkdirSync(join(home, "ws"));
    const r = await cli(["config", "--config", "cfg.json", "--workspace", "ws"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("from-cfg");
    expect(r.stdout).toContain(join(home, "ws"));
  });

  it("config --trust --workspace trusts that workspace's file", async () => {
    mkdirSync(join(home, "ws"));
    writeFileSync(join(home, "ws", "eddy.config.json"), "{}");
    const r = await cli(["config", "--trust", "--workspace", "ws"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`trusted ${join(home, "ws", "eddy.config.json")}`);
  });

  it("doctor --config reads the file there (a file that is not JSON is said to be, before any probe)", async () => {
    write("cfg.json", "{not json");
    const r = await cli(["doctor", "--config", "cfg.json"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`config file ${join(home, "cfg.json")} is not valid JSON`);
  });
});

describe("eddy batch: relative paths are from io.cwd", () => {
  it("the tasks file, --out, --schema, --workspace and --config", async () => {
    write("tasks.jsonl", '{"id":"a","prompt":"hi"}\n');
    write("s.json", JSON.stringify({ type: "object" }));
    write("cfg.json", "{}");
    mkdirSync(join(home, "ws"));
    const r = await cli([
      "batch",
      "tasks.jsonl",
      "--out",
      "out",
      "--schema",
      "s.json",
      "--workspace",
      "ws",
      "--config",
      "cfg.json",
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(home, "out", "results.jsonl"), "utf8")).toContain('"id":"a"');
  });

  it("a tasks file that is not there is named as given", async () => {
    const r = await cli(["batch", "nope.jsonl", "--out", "out"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("eddy: cannot read the tasks file nope.jsonl: ENOENT\n");
  });
});

describe("eddy replay, resume, view and undo: relative paths are from io.cwd", () => {
  it("replay TAPE", async () => {
    await recordTape("c.tape");
    const r = await cli(["replay", "c.tape"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("replay matches");
  });

  it("replay TAPE --live-tools --workspace DIR", async () => {
    await recordTape("c.tape");
    mkdirSync(join(home, "ws"));
    const r = await cli(["replay", "c.tape", "--live-tools", "--workspace", "ws"]);
    expect(r.code, r.stderr).toBe(0);
  });

  it("resume TAPE, and its --record", async () => {
    await recordTape("c.tape");
    // The run's end cut off, as when its process died: a tape to resume.
    const lines = readFileSync(join(home, "c.tape"), "utf8").trimEnd().split("\n");
    write("c.tape", `${lines.filter((l) => !l.includes('"type":"run_ended"')).join("\n")}\n`);
    const r = await cli(["resume", "c.tape", "--record", "d.tape"]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(home, "d.tape"), "utf8")).toContain('"run_ended"');
  });

  it("view TAPE --out PAGE and undo TAPE", async () => {
    await recordTape("c.tape");
    const view = await cli(["view", "c.tape", "--out", "p.html", "--no-open"]);
    expect(view.code, view.stderr).toBe(0);
    expect(existsSync(join(home, "p.html"))).toBe(true);
    const undo = await cli(["undo", "c.tape"]);
    expect(undo.code, undo.stderr).toBe(0);
  });
});

describe("eddy mock: a relative --scenario is from io.cwd", () => {
  it("serves the scenario there", async () => {
    write("sc.json", JSON.stringify({ turns: [{ items: [{ type: "message", text: "scripted" }] }] }));
    let stop: (signal: string) => void = () => {};
    let stdout = "";
    let stderr = "";
    const io: CliIo = {
      stdout: {
        write: (s: string) => {
          stdout += s;
          // The banner is out once the server listens: stop it.
          if (s.includes("http")) setImmediate(() => stop("SIGINT"));
          return true;
        },
      },
      stderr: { write: (s: string) => (stderr += s) },
      readStdin: async () => "",
      stdinIsTTY: false,
      env: {},
      cwd: home,
      onSignal: (handler) => {
        stop = handler;
        return () => {};
      },
    };
    const code = await main(["mock", "--scenario", "sc.json"], io);
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+/);
    expect(stderr).toContain("(scenario sc.json)");
  });
});

describe("eddy mock: a --scenario's errors name it as typed, never as resolved from io.cwd", () => {
  it.each([
    ["missing.json", "eddy: cannot read the scenario file missing.json: ENOENT"],
    ["folder.json", "eddy: the scenario file folder.json is a directory, not a regular file: give a file"],
    ["syntax.json", "eddy: syntax.json: not valid JSON: "],
    ["shape.json", "eddy: shape.json: turns: Invalid input: expected array, received number"],
    ["bad.yaml", "eddy: bad.yaml: not valid YAML: "],
    ["tagged.yaml", "eddy: tagged.yaml: not valid YAML: Unresolved tag: !!js/function"],
    ["huge.json", "eddy: the scenario file huge.json is larger than"],
    ["./sub/../shape.json", "eddy: ./sub/../shape.json: turns: "],
    ["sub/\u001b[2Jx.json", "eddy: cannot read the scenario file sub/x.json: ENOENT"],
  ])("%j", async (typed, said) => {
    mkdirSync(join(home, "folder.json"));
    mkdirSync(join(home, "sub"));
    write("syntax.json", "{ turns: ");
    write("shape.json", '{"turns": 3}');
    write("bad.yaml", "turns: [\n");
    write("tagged.yaml", "turns: !!js/function 'x'\n");
    write("huge.json", "");
    truncateSync(join(home, "huge.json"), 64 * 1024 * 1024 + 1); // sparse: nothing is written
    const r = await cli(["mock", "--scenario", typed]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.startsWith(said), r.stderr).toBe(true);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).not.toContain(home);
  });
});
