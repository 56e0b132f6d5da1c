// The module loader hooks of module-log.mjs: appends each loaded module's URL to the log file.
import { appendFileSync } from "node:fs";

let out;

export function initialize(data) {
  out = data.out;
}

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  appendFileSync(out, `${url}\n`);
  return result;
}
