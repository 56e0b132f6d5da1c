/**
 * The run viewer: tapes and batch folders → one self-contained HTML page (`eddy view`).
 */
export { loadViewAssets, type ViewAssets } from "./assets.js";
export { type BatchFolder, isBatchFolder, readBatchFolder } from "./batch.js";
export { collectViewInput } from "./load.js";
export { type PageInput, type PageRun, renderViewPage } from "./page.js";
export {
  type FrameRecord,
  parseViewTape,
  readViewTape,
  type TapeScan,
  type TapeVisitor,
  type ViewTape,
} from "./read.js";
export { buildRunView, RunBuilder, type TapeFacts } from "./run-model.js";
export type * from "./view-data.js";
export { PAGE_IDS } from "./view-data.js";
