export { functionCallOutputItem, type InputNormalization, toInputItem, userMessageItem } from "./items.js";
export { type RepairedHistory, repairChainedOutputs, repairHistory } from "./pairing.js";
