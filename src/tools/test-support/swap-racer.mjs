// A hostile local process for the symlink-race tests: flips a workspace path between a real
// entry and a symlink that leads outside the workspace, SWAPS times, with short random pauses so
// the tool calls of the test interleave with every state. Prints "ready" once set up and
// "done N" when finished. Tools may create, replace or remove the path meanwhile (that is inside
// the workspace and allowed); the racer repairs its state and goes on.
//
//   node swap-racer.mjs file WORKSPACE NAME LINK_TARGET SWAPS   NAME: a file <-> a symlink
//   node swap-racer.mjs dir  WORKSPACE NAME LINK_TARGET SWAPS   NAME: a directory <-> a symlink
import { lstatSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [mode, workspace, name, linkTarget, swapsText] = process.argv.slice(2);
const swaps = Number(swapsText);
const path = join(workspace, name);
const tmp = join(workspace, `.${name}.racer-tmp`);
const parked = join(workspace, `.${name}.racer-real`);
const pause = new Int32Array(new SharedArrayBuffer(4));
const sleep = (ms) => Atomics.wait(pause, 0, 0, ms);

function exists(p) {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/** Runs `step` until it succeeds; `repair` runs after each failure (a tool got in the way). */
function retry(step, repair) {
  for (let attempt = 1; ; attempt++) {
    try {
      step();
      return;
    } catch (error) {
      if (attempt === 1000) throw error;
      try {
        repair();
      } catch {
        // The tool is still at work there: try again.
      }
    }
  }
}

function makeRealDir(at) {
  mkdirSync(at, { recursive: true });
  writeFileSync(join(at, "inner.txt"), "inside\n");
}

function toLink() {
  if (mode === "dir") {
    if (!exists(parked)) {
      try {
        if (lstatSync(path).isDirectory()) renameSync(path, parked);
      } catch {}
      if (!exists(parked)) makeRealDir(parked);
    }
  }
  retry(
    () => {
      rmSync(tmp, { force: true });
      symlinkSync(linkTarget, tmp);
      renameSync(tmp, path);
    },
    () => rmSync(path, { recursive: true, force: true }), // never follows the symlink
  );
}

function toReal() {
  if (mode === "file") {
    writeFileSync(tmp, "inside\n");
    renameSync(tmp, path);
    return;
  }
  retry(
    () => {
      rmSync(path, { recursive: true, force: true });
      renameSync(parked, path);
    },
    () => {
      if (!exists(parked)) makeRealDir(parked);
    },
  );
}

if (mode === "dir") makeRealDir(path);
else writeFileSync(path, "inside\n");
process.stdout.write("ready\n");
let real = true;
for (let i = 0; i < swaps; i++) {
  if (real) toLink();
  else toReal();
  real = !real;
  sleep(Math.random() * 3);
}
if (!real) toReal();
process.stdout.write(`done ${swaps}\n`);
