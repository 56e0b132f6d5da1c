export { type AssembledResponse, finishAssembly } from "./finish.js";
export {
  type AssembledCall,
  type Assembly,
  createAssembly,
  type ItemState,
  type PartState,
  type StreamError,
  type TerminalKind,
} from "./state.js";
export { step } from "./step.js";
