/** The AI SDK adapter's public surface (re-exported by `eddy/ai-sdk`). */
export type { AiSdkCallSettings } from "./call-options.js";
export {
  type AiSdkLanguageModel,
  type AiSdkModelSource,
  type AiSdkProviderOptions,
  aiSdkCapabilities,
  createAiSdkProvider,
} from "./provider.js";
