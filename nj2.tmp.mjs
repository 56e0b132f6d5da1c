import { Queue } from "bullmq";
const q = new Queue("eddy-batch", { connection: { url: "redis://127.0.0.1:6390", maxRetriesPerRequest: null } });
console.log(await q.getJobState("nonjson"), JSON.stringify(await q.getJobCounts()));
await q.close();
