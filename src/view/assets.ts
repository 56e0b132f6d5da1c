/**
 * The page's script and style, bundled at build time by scripts/build.mjs (esbuild: the browser
 * code under src/view/client/ with marked, DOMPurify and jsdiff) into dist/view/client/. The page
 * inlines them, so a view file needs nothing else at view time.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { EddyError } from "../errors.js";

/** The inlined script and stylesheet of a view page. */
export interface ViewAssets {
  script: string;
  style: string;
}

// Beside the compiled module (dist/view/ → dist/view/client/), or, when running from the sources
// (tests, tsx), in the dist/ that `npm run build` made.
const CANDIDATES = ["./client/", "../../dist/view/client/"];

let cached: ViewAssets | undefined;

/** Loads the bundled page assets (once). A missing bundle is a clear error saying to build. */
export function loadViewAssets(): ViewAssets {
  if (cached !== undefined) return cached;
  for (const dir of CANDIDATES) {
    try {
      const script = readFileSync(fileURLToPath(new URL(`${dir}page.js`, import.meta.url)), "utf8");
      const style = readFileSync(fileURLToPath(new URL(`${dir}page.css`, import.meta.url)), "utf8");
      cached = { script, style };
      return cached;
    } catch {}
  }
  throw new EddyError(
    "invalid_config",
    "the run viewer's page assets are missing (dist/view/client/page.js); run `npm run build` in the eddy package",
    { fault: "system" },
  );
}
