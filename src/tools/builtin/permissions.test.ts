/**
 * A tool that cannot read answers `ok:false` with the reason, never `ok:true` with "permission
 * denied" tucked into stderr; the output it could gather is still shown. The calls run as an
 * unprivileged user (`runToolsUnprivileged`): root reads everything.
 */
import { chmod, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createSandbox,
  runToolsUnprivileged,
  type Sandbox,
  type ToolCallSpec,
  type UnprivilegedResult,
} from "../test-support/workspace.js";

let box: Sandbox;
const results = new Map<string, UnprivilegedResult>();

const CALLS: Record<string, Omit<ToolCallSpec, "workspace"> & { workspace?: string }> = {
  listAll: { name: "list_dir", args: { recursive: true } },
  grepAll: { name: "grep", args: { pattern: "needle" } },
  readLocked: { name: "read_file", args: { path: "secret.txt" } },
  listLocked: { name: "list_dir", args: { path: "locked" } },
  grepLocked: { name: "grep", args: { pattern: "needle", path: "secret.txt" } },
  closedWorkspace: { name: "list_dir", args: {}, workspace: "closed-ws" },
};

beforeAll(async () => {
  box = await createSandbox();
  await box.files({ "open/a.txt": "needle\n", "locked/b.txt": "needle\n", "secret.txt": "needle\n" });
  await mkdir(join(box.base, "closed-ws"));
  await chmod(box.base, 0o755);
  await chmod(box.root, 0o755);
  await chmod(join(box.root, "locked"), 0o000);
  await chmod(join(box.root, "secret.txt"), 0o000);
  await chmod(join(box.base, "closed-ws"), 0o000);
  const entries = Object.entries(CALLS);
  const done = await runToolsUnprivileged(
    entries.map(([, c]) => ({
      ...c,
      workspace: c.workspace === undefined ? box.root : join(box.base, c.workspace),
    })),
  );
  entries.forEach(([key], i) => {
    results.set(key, done[i] as UnprivilegedResult);
  });
});
afterAll(() => box.cleanup());

const result = (key: keyof typeof CALLS) => results.get(key) as UnprivilegedResult;

describe("unreadable files and directories", () => {
  it("list_dir: ok:false naming what could not be read, the rest still listed", () => {
    const r = result("listAll");
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe("tool_failed");
    expect(r.error?.message).toMatch(
      /list_dir: the listing is incomplete: cannot read locked: permission denied/,
    );
    expect(r.parsed.stdout.split("\n")).toEqual(["locked/", "open/", "open/a.txt", "secret.txt"]);
  });

  it("grep: ok:false naming the unreadable file and directory, the matches found still shown", () => {
    const r = result("grepAll");
    expect(r.ok).toBe(false);
    expect(r.error?.message).toMatch(
      /grep: the search is incomplete: .*locked: permission denied.*secret.txt: permission denied/,
    );
    expect(r.parsed.stdout).toBe("open/a.txt:1:needle");
  });

  it.each<[keyof typeof CALLS, RegExp]>([
    ["readLocked", /read_file: secret.txt: permission denied/],
    ["listLocked", /list_dir: locked: permission denied/],
    ["grepLocked", /grep: secret.txt: permission denied/],
  ])("%s: ok:false", (key, message) => {
    const r = result(key);
    expect(r.ok).toBe(false);
    expect(r.error?.message).toMatch(message);
  });

  it("an unreadable workspace is refused with a configuration error", () => {
    const r = result("closedWorkspace");
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe("invalid_config");
    expect(r.error?.message).toMatch(/the workspace .*closed-ws cannot be read \(permission denied\)/);
  });
});
