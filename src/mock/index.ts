/**
 * The mock Open Responses server: the default provider when none is configured, the double behind
 * every integration test, and `eddy mock` for anyone testing an Open Responses client offline.
 */
export type { CompactResource } from "./compact-response.js";
export { MOCK_DEFAULTS } from "./defaults.js";
export type { ErrorEventFault, HttpErrorFault, MockFaults } from "./faults.js";
export { createMockHandler, type MockHandler, type MockOptions, type WebSocketAdmission } from "./handler.js";
export {
  createMockServer,
  type MockServer,
  type MockServerOptions,
  type MockServerStats,
} from "./listener.js";
export type { PlannedStatus, UsageOverrides } from "./plan.js";
export { formatRequestLog, type MockRequestLog, type RecordedRequest } from "./recording.js";
export type { MockHttpRequest, MockReply } from "./reply.js";
export type { RequestConformance } from "./request.js";
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
export type { WebSocketPeer, WebSocketSession, WebSocketStats } from "./websocket-session.js";
