export {
  CONTEXT_BUNDLE_SCHEMA,
  type CompileOptions,
  type ContextBundle,
  type ContextItem,
  compileContextBundle,
  renderContextBundle,
} from "./bundle.js";
