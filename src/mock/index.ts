/**
 * The mock Open Responses server: the default provider when none is configured, the double behind
 * every integration test, and `eddy mock` for anyone testing an Open Responses client offline.
 */
export { MOCK_DEFAULTS } from "./defaults.js";
export type { ErrorEventFault, HttpErrorFault, MockFaults } from "./faults.js";
export { createMockHandler, type MockHandler, type MockOptions } from "./handler.js";
export { createMockServer, type MockServer, type MockServerOptions } from "./listener.js";
export type { PlannedStatus, UsageOverrides } from "./plan.js";
export { formatRequestLog, type MockRequestLog, type RecordedRequest } from "./recording.js";
export type {
  Scenario,
  ScenarioExpect,
  ScenarioFunctionCallItem,
  ScenarioItem,
  ScenarioMessageItem,
  ScenarioReasoningItem,
  ScenarioTurn,
} from "./scenario.js";
export { loadScenario, parseScenario } from "./scenario-load.js";
