/**
 * `npm run bench -- tokenizer`: the JavaScript tokenizers for OpenAI models that eddy could count
 * history tokens with — `gpt-tokenizer` (the dependency), `js-tiktoken` and `tiktoken` (WASM) —
 * compared on what matters for a CLI that loads one lazily: cold start in a fresh process (import
 * + first count), memory after loading, counting speed on a mixed corpus, size on disk, licence,
 * and agreement of the counts (all o200k_base). The peers are optional: install them with
 * `npm i --no-save js-tiktoken@1 tiktoken@1` to include them; missing ones are skipped.
 * Also reports how far `estimateTokens` (the count for non-OpenAI models) is from o200k_base.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { estimateTokens } from "../../src/history/tokens.js";
import {
  type Benchmark,
  describeEnvironment,
  environment,
  type Headline,
  headlineLines,
  logEnd,
  markdownTable,
  median,
  num,
  numRange,
  textTable,
} from "../harness.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The tokenizer eddy depends on; the other contenders are its peers. */
const DEPENDENCY = "gpt-tokenizer";

interface Contender {
  name: string;
  /** ESM source that defines `count(text)` after loading the o200k_base encoding. */
  load: string;
}

const CONTENDERS: Contender[] = [
  {
    name: "gpt-tokenizer",
    load: `const m = await import("gpt-tokenizer/encoding/o200k_base"); const o = { disallowedSpecial: new Set() }; count = (s) => m.countTokens(s, o);`,
  },
  {
    name: "js-tiktoken",
    load: `const { Tiktoken } = await import("js-tiktoken/lite"); const r = (await import("js-tiktoken/ranks/o200k_base")).default; const e = new Tiktoken(r); count = (s) => e.encode(s, [], []).length;`,
  },
  {
    name: "tiktoken",
    load: `const { get_encoding } = await import("tiktoken"); const e = get_encoding("o200k_base"); count = (s) => e.encode(s, [], []).length;`,
  },
];

/** Source files, the vendored spec and prose in four scripts: what tool outputs look like. */
function corpus(): Record<string, string> {
  const walk = (d: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith(".ts") ? [join(d, e.name)] : [],
    );
  return {
    code: walk(join(ROOT, "src"))
      .sort()
      .map((f) => readFileSync(f, "utf8"))
      .join("\n")
      .slice(0, 300_000),
    json: readFileSync(join(ROOT, "schemas/openresponses/openapi.json"), "utf8").slice(0, 300_000),
    prose: readFileSync(join(ROOT, "README.md"), "utf8").repeat(3),
    cjk: "北京的天气很好，我们去公园散步吧。今天是星期三。".repeat(300),
    cyrillic: "Привет, мир! Как дела? Сегодня хорошая погода. ".repeat(300),
    emoji: "🌍🚀 ok ".repeat(500),
  };
}

function installed(name: string): { version: string; license: string; bytes: number } | undefined {
  const dir = join(ROOT, "node_modules", name);
  try {
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
      version: string;
      license: string;
    };
    return { version: pkg.version, license: pkg.license, bytes: du(dir) };
  } catch {
    return undefined;
  }
}

function du(path: string): number {
  const s = statSync(path);
  if (!s.isDirectory()) return s.size;
  return readdirSync(path).reduce((n, e) => n + du(join(path, e)), 0);
}

/** One fresh process: load, count once, count the corpus cold and warm. */
function probe(
  c: Contender,
  corpusFile: string,
  rounds: number,
): {
  loadMs: number;
  firstMs: number;
  coldMs: number;
  warmMs: number;
  rssMb: number;
  counts: Record<string, number>;
} {
  const script = `
    let count;
    const t0 = performance.now();
    ${c.load}
    const t1 = performance.now();
    count("Hello, world!");
    const t2 = performance.now();
    const rss = process.memoryUsage().rss / 1048576;
    const parts = JSON.parse((await import("node:fs")).readFileSync(${JSON.stringify(corpusFile)}, "utf8"));
    const all = Object.values(parts).join("\\n");
    const t3 = performance.now();
    count(all);
    const coldMs = performance.now() - t3;
    const warm = [];
    for (let i = 0; i < ${rounds}; i++) { const t = performance.now(); count(all); warm.push(performance.now() - t); }
    warm.sort((a, b) => a - b);
    const counts = Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, count(v)]));
    process.stdout.write(JSON.stringify({ loadMs: t1 - t0, firstMs: t2 - t1, coldMs, warmMs: warm[warm.length >> 1], rssMb: rss, counts }));`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    cwd: ROOT,
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`${c.name}: ${r.stderr.split("\n")[0]}`);
  return JSON.parse(r.stdout);
}

/**
 * README's rows: the dependency's cold start and warm speed (the table's medians) beside the peers'
 * that are installed, and how far `estimateTokens` strays from o200k_base over the corpus parts (the
 * lowest–highest of the estimate table's ratios).
 */
function headlines(
  rows: readonly string[][],
  estimates: readonly { k: string; ratio: number }[],
  bytes: number,
): Headline[] {
  const own = rows.find((r) => r[0] === DEPENDENCY);
  const peers = rows.filter((r) => r !== own);
  const missing = CONTENDERS.map((c) => c.name).filter(
    (n) => n !== DEPENDENCY && !rows.some((r) => r[0] === n),
  );
  const cells = (r: readonly string[]) => `${r[4]} ms / ${r[7]} MB/s`;
  const known = estimates.map((e) => e.ratio).filter((x) => Number.isFinite(x));
  return [
    {
      what: `history token counting, o200k_base: cold start in a fresh process (import + first count) / warm counting of a ${num(bytes / 1e3)} kB mixed corpus`,
      eddy: own === undefined ? `${DEPENDENCY} not installed` : `${DEPENDENCY} ${cells(own)}`,
      peers: [
        ...peers.map((r) => `${r[0]} ${cells(r)}`),
        ...(missing.length === 0 ? [] : [`${missing.join(", ")} not installed in this run`]),
      ].join("; "),
    },
    {
      what: `\`estimateTokens\` (non-OpenAI models) against o200k_base, per corpus part (${estimates.map((e) => e.k).join(", ")})`,
      eddy: known.length === 0 ? "no o200k_base count" : `${numRange(known, 2)}× the o200k_base count`,
      peers: "—",
    },
  ];
}

export const tokenizerBenchmark: Benchmark = {
  name: "tokenizer",
  title: "Tokenizers",
  async run(ctx) {
    const started = Date.now();
    const env = environment();
    const parts = corpus();
    const corpusFile = join(mkdtempSync(join(tmpdir(), "eddy-bench-")), "corpus.json");
    writeFileSync(corpusFile, JSON.stringify(parts));
    const bytes = Buffer.byteLength(Object.values(parts).join("\n"));
    const runs = ctx.quick ? 1 : 5;
    const rounds = ctx.quick ? 2 : 7;
    const rows: string[][] = [];
    let reference: Record<string, number> | undefined;
    const agree: string[] = [];
    for (const c of CONTENDERS) {
      const pkg = installed(c.name);
      if (pkg === undefined) {
        ctx.log(`${c.name}: not installed, skipped (npm i --no-save js-tiktoken@1 tiktoken@1)`);
        continue;
      }
      const probes = Array.from({ length: runs }, () => probe(c, corpusFile, rounds));
      const p = probes[0] as (typeof probes)[number];
      reference ??= p.counts;
      agree.push(
        `${c.name} ${JSON.stringify(p.counts) === JSON.stringify(reference) ? "agrees" : "DIFFERS"}`,
      );
      const m = (f: (x: (typeof probes)[number]) => number) => median(probes.map(f));
      rows.push([
        c.name,
        pkg.version,
        pkg.license,
        num(pkg.bytes / 1048576, 1),
        num(m((x) => x.loadMs + x.firstMs)),
        num(m((x) => x.rssMb)),
        num(m((x) => x.coldMs)),
        num(bytes / 1e6 / (m((x) => x.warmMs) / 1000), 1),
      ]);
      ctx.log(`${c.name}: done`);
    }
    const header = [
      "contender",
      "version",
      "licence",
      "MB on disk",
      "cold start ms",
      "RSS MB",
      "first corpus count ms",
      "warm MB/s",
    ];
    ctx.log(`\n${textTable(header, rows)}`);
    const estimates = Object.entries(parts).map(([k, text]) => {
      const real = reference?.[k] ?? Number.NaN;
      const estimate = estimateTokens(text);
      return { k, text, real, estimate, ratio: estimate / real };
    });
    const estimateRows = estimates.map((e) => [
      e.k,
      num(Buffer.byteLength(e.text)),
      num(e.real),
      num(e.estimate),
      num(e.ratio, 2),
    ]);
    rmSync(dirname(corpusFile), { recursive: true, force: true });
    const { envEnd } = logEnd(ctx, started, [`counts: ${agree.join(", ")}`]);
    return [
      "## Tokenizers",
      "",
      `${describeEnvironment(env)}; loadavg at end ${envEnd.loadavg}`,
      "",
      `Method: each contender in ${runs} fresh processes (median shown): cold start = import of the o200k_base encoding + the first count of a short string; RSS right after; then the corpus (${num(bytes)} bytes: eddy's src/, the vendored openapi.json, README, CJK, Cyrillic, emoji) counted once cold and ${rounds} times warm (median). Disk size is the installed package folder.`,
      "",
      markdownTable(header, rows),
      "",
      `Counts: ${agree.join(", ")} (identical o200k_base counts per corpus part).`,
      "",
      "Packed sizes (npm pack --dry-run, 2026-11-24): gpt-tokenizer 4.0.0 9.1 MB (27.2 MB unpacked, no dependencies), js-tiktoken 1.0.21 10.2 MB (22.4 MB, depends on base64-js), tiktoken 1.0.22 10.6 MB (23.6 MB, WASM).",
      "",
      "**Choice: gpt-tokenizer.** Pure JavaScript (no WASM to load, no `free()`), no dependencies, MIT, the fastest cold start and the fastest warm counting here, the least memory, and counts identical to tiktoken's. Its size on disk is the largest (it ships CJS, ESM and sources), which costs nothing at run time: eddy imports only `gpt-tokenizer/encoding/<name>` and `gpt-tokenizer/mapping`, and only when a history may pass a threshold (src/history/tokens.ts), so an ordinary run never loads it.",
      "",
      "### estimateTokens (non-OpenAI models) against o200k_base",
      "",
      markdownTable(["part", "bytes", "o200k_base", "estimate", "estimate / o200k"], estimateRows),
      "",
      headlineLines(headlines(rows, estimates, bytes), env),
    ].join("\n");
  },
};
