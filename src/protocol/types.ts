/**
 * Friendly names for the Open Responses types generated from the vendored OpenAPI document
 * (`schemas/openresponses/openapi.json`). Nothing here is written by hand but the aliases.
 */
import type { components } from "./generated/openapi.js";

type Schemas = components["schemas"];

// Requests
export type CreateResponseBody = Schemas["CreateResponseBody"];
export type ItemParam = Schemas["ItemParam"];
export type FunctionToolParam = Schemas["FunctionToolParam"];
export type ToolChoiceParam = Schemas["ToolChoiceParam"];
export type FunctionCallItemParam = Schemas["FunctionCallItemParam"];
export type FunctionCallOutputItemParam = Schemas["FunctionCallOutputItemParam"];
export type ReasoningItemParam = Schemas["ReasoningItemParam"];
export type UserMessageItemParam = Schemas["UserMessageItemParam"];
export type AssistantMessageItemParam = Schemas["AssistantMessageItemParam"];
export type TextParam = Schemas["TextParam"];

// Responses
export type ResponseResource = Schemas["ResponseResource"];
export type ItemField = Schemas["ItemField"];
export type MessageItem = Schemas["Message"];
export type FunctionCallItem = Schemas["FunctionCall"];
export type FunctionCallOutputItem = Schemas["FunctionCallOutput"];
export type ReasoningItem = Schemas["ReasoningBody"];
export type CompactionItem = Schemas["CompactionBody"];
export type Usage = Schemas["Usage"];
export type ErrorPayload = Schemas["ErrorPayload"];
export type ResponseError = Schemas["Error"];
export type FunctionTool = Schemas["FunctionTool"];

// Streaming events
export type ResponseCreatedEvent = Schemas["ResponseCreatedStreamingEvent"];
export type ResponseQueuedEvent = Schemas["ResponseQueuedStreamingEvent"];
export type ResponseInProgressEvent = Schemas["ResponseInProgressStreamingEvent"];
export type ResponseCompletedEvent = Schemas["ResponseCompletedStreamingEvent"];
export type ResponseFailedEvent = Schemas["ResponseFailedStreamingEvent"];
export type ResponseIncompleteEvent = Schemas["ResponseIncompleteStreamingEvent"];
export type OutputItemAddedEvent = Schemas["ResponseOutputItemAddedStreamingEvent"];
export type OutputItemDoneEvent = Schemas["ResponseOutputItemDoneStreamingEvent"];
export type ContentPartAddedEvent = Schemas["ResponseContentPartAddedStreamingEvent"];
export type ContentPartDoneEvent = Schemas["ResponseContentPartDoneStreamingEvent"];
export type OutputTextDeltaEvent = Schemas["ResponseOutputTextDeltaStreamingEvent"];
export type OutputTextDoneEvent = Schemas["ResponseOutputTextDoneStreamingEvent"];
export type OutputTextAnnotationAddedEvent = Schemas["ResponseOutputTextAnnotationAddedStreamingEvent"];
export type RefusalDeltaEvent = Schemas["ResponseRefusalDeltaStreamingEvent"];
export type RefusalDoneEvent = Schemas["ResponseRefusalDoneStreamingEvent"];
export type ReasoningDeltaEvent = Schemas["ResponseReasoningDeltaStreamingEvent"];
export type ReasoningDoneEvent = Schemas["ResponseReasoningDoneStreamingEvent"];
export type ReasoningSummaryPartAddedEvent = Schemas["ResponseReasoningSummaryPartAddedStreamingEvent"];
export type ReasoningSummaryPartDoneEvent = Schemas["ResponseReasoningSummaryPartDoneStreamingEvent"];
export type ReasoningSummaryTextDeltaEvent = Schemas["ResponseReasoningSummaryDeltaStreamingEvent"];
export type ReasoningSummaryTextDoneEvent = Schemas["ResponseReasoningSummaryDoneStreamingEvent"];
export type FunctionCallArgumentsDeltaEvent = Schemas["ResponseFunctionCallArgumentsDeltaStreamingEvent"];
export type FunctionCallArgumentsDoneEvent = Schemas["ResponseFunctionCallArgumentsDoneStreamingEvent"];
export type ErrorEvent = Schemas["ErrorStreamingEvent"];

/** Every streaming event the spec defines (discriminated by `type`). */
export type StreamingEvent =
  | ResponseCreatedEvent
  | ResponseQueuedEvent
  | ResponseInProgressEvent
  | ResponseCompletedEvent
  | ResponseFailedEvent
  | ResponseIncompleteEvent
  | OutputItemAddedEvent
  | OutputItemDoneEvent
  | ContentPartAddedEvent
  | ContentPartDoneEvent
  | OutputTextDeltaEvent
  | OutputTextDoneEvent
  | OutputTextAnnotationAddedEvent
  | RefusalDeltaEvent
  | RefusalDoneEvent
  | ReasoningDeltaEvent
  | ReasoningDoneEvent
  | ReasoningSummaryPartAddedEvent
  | ReasoningSummaryPartDoneEvent
  | ReasoningSummaryTextDeltaEvent
  | ReasoningSummaryTextDoneEvent
  | FunctionCallArgumentsDeltaEvent
  | FunctionCallArgumentsDoneEvent
  | ErrorEvent;

/** Lifecycle events that carry a full `ResponseResource` snapshot. */
export type ResponseLifecycleEvent =
  | ResponseCreatedEvent
  | ResponseQueuedEvent
  | ResponseInProgressEvent
  | ResponseCompletedEvent
  | ResponseFailedEvent
  | ResponseIncompleteEvent;

/** A JSON object as parsed from the wire: the type of an event whose `type` is not (yet) known. */
export type JsonObject = { [key: string]: unknown };
