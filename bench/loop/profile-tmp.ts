import { Session } from "node:inspector/promises";
import { writeFileSync } from "node:fs";
import { EDDY_ON, FLOOR_LOOP } from "./contenders.js";
import { inProcessContenders } from "./in-process.js";
const { contenders } = inProcessContenders();
const name = process.argv[2] === "floor" ? FLOOR_LOOP : EDDY_ON;
const c = contenders.find((x) => x.name === name)!;
const ignore = () => {};
for (let i = 0; i < 1000; i++) { c.prepare?.(); await c.run(ignore); }
const s = new Session(); s.connect();
await s.post("Profiler.enable"); await s.post("Profiler.setSamplingInterval", { interval: 50 });
await s.post("Profiler.start");
const t0 = process.cpuUsage();
const N = 3000;
for (let i = 0; i < N; i++) { c.prepare?.(); await c.run(ignore); }
const u = process.cpuUsage(t0);
const { profile } = await s.post("Profiler.stop");
writeFileSync("/tmp/prof/run.cpuprofile", JSON.stringify(profile));
console.log("cpu us/run", (u.user + u.system) / N);
