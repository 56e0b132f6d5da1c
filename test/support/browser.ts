/**
 * A real Chromium for page tests: Debian's `chromium` (installed by .ci/run when missing), driven
 * by playwright-core, headless, with no network services of its own (no component updates, sync,
 * or background requests) and a fresh profile per launch. No browser is downloaded.
 */
import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";

/** Where Chromium is: CHROMIUM_PATH, else the usual Debian/Ubuntu/Chrome paths. */
export function chromiumPath(): string {
  const candidates = [
    process.env.CHROMIUM_PATH,
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
  ];
  const found = candidates.find((p) => p !== undefined && p !== "" && existsSync(p));
  if (found === undefined) {
    throw new Error(
      "no Chromium found: install it (apt-get install -y chromium; .ci/run does) or set CHROMIUM_PATH",
    );
  }
  return found;
}

/** Launches headless Chromium (Playwright gives every launch a fresh temporary --user-data-dir). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}

/** A page that records every request it makes and every uncaught script error. */
export async function openPage(
  browser: Browser,
  url: string,
): Promise<{ page: Page; requests: string[]; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const requests: string[] = [];
  const errors: string[] = [];
  page.on("request", (r) => requests.push(r.url()));
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(url);
  return { page, requests, errors };
}
