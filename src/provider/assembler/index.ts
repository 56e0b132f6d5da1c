export { type AssembledResponse, finishAssembly, outputTextOf } from "./finish.js";
export {
  type CallItemType,
  isNativeCallType,
  NATIVE_CALL_TYPES,
  type NativeCallType,
  nativeCallInput,
  patchEnvelope,
} from "./native-calls.js";
export {
  type AssembledCall,
  type Assembly,
  type AssemblyOptions,
  createAssembly,
  type ItemState,
  type PartState,
  type StreamError,
  type TerminalKind,
} from "./state.js";
export { step } from "./step.js";
