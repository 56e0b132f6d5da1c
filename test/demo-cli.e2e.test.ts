/**
 * End-to-end: the built CLI on a fresh machine (no key, no network) shows the product with the
 * embedded demo model — it writes files with --allow-write, runs commands with --allow-shell,
 * says which flag a missing tool needs, describes an attached image, and its runs replay.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "./support/cli.js";

const workspace = () => mkdtempSync(join(tmpdir(), "eddy-demo-e2e-"));

describe("the demo model on a fresh machine", () => {
  it('`eddy run --allow-write "Create a file named notes.txt containing the text hello"` creates it, and the tape replays', async () => {
    const cwd = workspace();
    const prompt = "Create a file named notes.txt containing the text hello";
    const r = await runCli(["run", "--allow-write", "--record", "t.tape", prompt], { cwd });
    expect(r.code).toBe(0);
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("hello");
    expect(r.stderr).toContain('write_file {"path":"notes.txt","content":"hello"}');
    expect(r.stdout).toBe("I created notes.txt (5 bytes).\n");
    const replay = await runCli(["replay", "t.tape"], { cwd });
    expect(replay.code).toBe(0);
    expect(replay.stdout + replay.stderr).toContain("replay matches");
  });

  it("without --allow-write it writes nothing and names the flag", async () => {
    const cwd = workspace();
    const r = await runCli(["run", "Create a file named notes.txt containing the text hello"], { cwd });
    expect(r.code).toBe(0);
    expect(existsSync(join(cwd, "notes.txt"))).toBe(false);
    expect(r.stdout).toContain("I can’t write files here: run with --allow-write");
  });

  it("--allow-shell: runs the command and answers with its output", async () => {
    const r = await runCli(["run", "--allow-shell", "Run `echo hi from the shell`"], { cwd: workspace() });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('shell {"command":"echo hi from the shell"}');
    expect(r.stdout).toContain("`echo hi from the shell` printed:\n\n```\nhi from the shell\n```");
  });

  it("--image: “What is in this image?” describes the image, no folder listing", async () => {
    const cwd = workspace();
    const png =
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
    writeFileSync(join(cwd, "dot.png"), Buffer.from(png, "base64"));
    const r = await runCli(["run", "--image", "dot.png", "What is in this image?"], { cwd });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain("list_dir");
    expect(r.stdout).toContain("an image: image/png");
    expect(r.stdout).toContain("1×1 pixels");
  });
});
