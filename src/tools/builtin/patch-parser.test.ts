import { describe, expect, it } from "vitest";
import { applyChunks } from "./patch-apply.js";
import { type PatchOperation, PatchSyntaxError, parsePatch } from "./patch-parser.js";

const envelope = (...body: string[]) => ["*** Begin Patch", ...body, "*** End Patch"].join("\n");

describe("parsePatch", () => {
  it("parses every operation kind", () => {
    const ops = parsePatch(
      envelope(
        "*** Add File: docs/new.md",
        "+# Title",
        "+",
        "+text",
        "*** Delete File: old.txt",
        "*** Update File: src/a.ts",
        "*** Move to: src/b.ts",
        "@@ function f() {",
        " keep",
        "-old",
        "+new",
        "@@",
        "-x",
        "+y",
        "*** End of File",
      ),
    );
    expect(ops).toEqual<PatchOperation[]>([
      { kind: "add", path: "docs/new.md", contents: "# Title\n\ntext\n" },
      { kind: "delete", path: "old.txt" },
      {
        kind: "update",
        path: "src/a.ts",
        moveTo: "src/b.ts",
        chunks: [
          {
            context: "function f() {",
            oldLines: ["keep", "old"],
            newLines: ["keep", "new"],
            endOfFile: false,
            patchLine: 9,
          },
          { oldLines: ["x"], newLines: ["y"], endOfFile: true, patchLine: 13 },
        ],
      },
    ]);
  });

  it("accepts a first hunk without @@, empty lines as empty context, CRLF and a heredoc wrapper", () => {
    const patch = [
      "<<'EOF'",
      "*** Begin Patch",
      "*** Update File: a.txt",
      " one",
      "",
      "-two",
      "+2",
      "*** End Patch",
      "EOF",
    ].join("\r\n");
    expect(parsePatch(patch)).toEqual([
      {
        kind: "update",
        path: "a.txt",
        chunks: [
          { oldLines: ["one", "", "two"], newLines: ["one", "", "2"], endOfFile: false, patchLine: 3 },
        ],
      },
    ]);
  });

  it("an empty Add File makes an empty file", () => {
    expect(parsePatch(envelope("*** Add File: empty.txt"))).toEqual([
      { kind: "add", path: "empty.txt", contents: "" },
    ]);
  });

  it.each<[string, string, RegExp]>([
    ["no Begin", "*** Update File: a\n-x\n+y\n*** End Patch", /first line must be "\*\*\* Begin Patch"/],
    ["no End", "*** Begin Patch\n*** Delete File: a", /last line must be "\*\*\* End Patch"/],
    ["no operations", envelope(), /contains no file operations/],
    ["unknown header", envelope("*** Rename File: a"), /line 2: expected "\*\*\* Add File: "/],
    [
      "Add line without +",
      envelope("*** Add File: a.txt", "+ok", "oops"),
      /line 4: in "\*\*\* Add File: a.txt" every line must start with "\+"/,
    ],
    [
      "bad hunk line",
      envelope("*** Update File: a.txt", "@@", "*bad", "+x"),
      /line 4: unexpected line in a hunk of a.txt: "\*bad"/,
    ],
    ["update without hunks", envelope("*** Update File: a.txt"), /has no hunks/],
    ["hunk without changes", envelope("*** Update File: a.txt", "@@", " same"), /has no "-" or "\+" lines/],
    ["empty path", envelope("*** Delete File: "), /needs a path/],
  ])("rejects %s", (_label, patch, message) => {
    expect(() => parsePatch(patch)).toThrow(PatchSyntaxError);
    expect(() => parsePatch(patch)).toThrow(message);
  });
});

describe("applyChunks", () => {
  const chunk = (
    oldLines: string[],
    newLines: string[],
    extra: { context?: string; endOfFile?: boolean } = {},
  ) => ({
    oldLines,
    newLines,
    endOfFile: extra.endOfFile ?? false,
    patchLine: 3,
    ...(extra.context === undefined ? {} : { context: extra.context }),
  });

  it.each<[string, string, ReturnType<typeof chunk>[], string]>([
    ["replace one line", "a\nb\nc\n", [chunk(["a", "b"], ["a", "B"])], "a\nB\nc\n"],
    ["keep a missing final newline", "a\nb", [chunk(["b"], ["B"])], "a\nB"],
    ["keep CRLF", "a\r\nb\r\n", [chunk(["a"], ["A", "A2"])], "A\r\nA2\r\nb\r\n"],
    ["ignore trailing whitespace in the file", "x  \ny\n", [chunk(["x", "y"], ["x", "z"])], "x\nz\n"],
    ["ignore indentation differences", "    if (a) {\n", [chunk(["if (a) {"], ["if (b) {"])], "if (b) {\n"],
    ["match typographic punctuation", "say “hi” — now\n", [chunk(['say "hi" - now'], ["said"])], "said\n"],
    [
      "use @@ to pick the right occurrence",
      "f() {\n  x\n}\ng() {\n  x\n}\n",
      [chunk(["  x"], ["  y"], { context: "g() {" })],
      "f() {\n  x\n}\ng() {\n  y\n}\n",
    ],
    ["insert after the @@ line", "a\nb\n", [chunk([], ["new"], { context: "a" })], "a\nnew\nb\n"],
    ["insert at the end without @@", "a\n", [chunk([], ["z"])], "a\nz\n"],
    [
      "End of File picks the last occurrence",
      "x\ny\nx\n",
      [chunk(["x"], ["X"], { endOfFile: true })],
      "x\ny\nX\n",
    ],
    [
      "hunks apply in order",
      "1\n2\n3\n4\n",
      [chunk(["1"], ["one"]), chunk(["3"], ["three"])],
      "one\n2\nthree\n4\n",
    ],
    ["trailing empty context line = the final newline", "a\nb\n", [chunk(["b", ""], ["B", ""])], "a\nB\n"],
    ["delete everything", "a\n", [chunk(["a"], [])], ""],
    ["into an empty file", "", [chunk([], ["first"])], "first\n"],
  ])("%s", (_label, before, chunks, after) => {
    expect(applyChunks(before, chunks, "f.txt")).toBe(after);
  });

  it.each<[string, string, ReturnType<typeof chunk>[], RegExp]>([
    [
      "a missing @@ line",
      "a\n",
      [chunk(["a"], ["b"], { context: "nope" })],
      /f.txt: could not find the @@ context line "nope"/,
    ],
    ["a first line not found", "a\nb\n", [chunk(["zz", "b"], ["b"])], /f.txt: .*the line "zz" was not found/],
    [
      "a later line that does not follow",
      "a\nb\nc\n",
      [chunk(["a", "b", "X", "c"], ["a"])],
      /the line "X" was not found after "b" \(the hunk's first 2 line\(s\) matched\)/,
    ],
    [
      "hunks out of order",
      "1\n2\n",
      [chunk(["2"], ["two"]), chunk(["1"], ["one"])],
      /the line "1" was not found after line 2/,
    ],
  ])("names %s", (_label, before, chunks, message) => {
    expect(() => applyChunks(before, chunks, "f.txt")).toThrow(message);
  });
});
