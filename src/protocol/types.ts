/**
 * Friendly names for the Open Responses types generated from the vendored OpenAPI document
 * (`schemas/openresponses/openapi.json`). Nothing here is written by hand but the aliases.
 */
import type { components } from "./generated/openapi.js";

type Schemas = components["schemas"];

// Requests
/** The body of `POST /responses`: model, input, tools, and every request option. (`CreateResponseBody` in the spec) */
export type CreateResponseBody = Schemas["CreateResponseBody"];
/** One item of a request's `input`: a message, a function call or its output, a reasoning item, an item reference, … (`ItemParam` in the spec) */
export type ItemParam = Schemas["ItemParam"];
/** A function tool as a request declares it: name, description, JSON Schema parameters, `strict`. (`FunctionToolParam` in the spec) */
export type FunctionToolParam = Schemas["FunctionToolParam"];
/** `tool_choice`: `none`, `auto`, `required`, one named function, or an `allowed_tools` list. (`ToolChoiceParam` in the spec) */
export type ToolChoiceParam = Schemas["ToolChoiceParam"];
/** A `function_call` item as input (a call the model made earlier, resent statelessly). (`FunctionCallItemParam` in the spec) */
export type FunctionCallItemParam = Schemas["FunctionCallItemParam"];
/** A `function_call_output` input item: the answer to a call, keyed by `call_id`. (`FunctionCallOutputItemParam` in the spec) */
export type FunctionCallOutputItemParam = Schemas["FunctionCallOutputItemParam"];
/** A `reasoning` input item (resent with its `encrypted_content`). (`ReasoningItemParam` in the spec) */
export type ReasoningItemParam = Schemas["ReasoningItemParam"];
/** A user message input item. (`UserMessageItemParam` in the spec) */
export type UserMessageItemParam = Schemas["UserMessageItemParam"];
/** An assistant message input item (resent history). (`AssistantMessageItemParam` in the spec) */
export type AssistantMessageItemParam = Schemas["AssistantMessageItemParam"];
/** The request's `text` options: the output format (plain text, JSON Schema) and verbosity. (`TextParam` in the spec) */
export type TextParam = Schemas["TextParam"];

// Responses
/** The complete response object that was returned by the Responses API. (`ResponseResource` in the spec) */
export type ResponseResource = Schemas["ResponseResource"];
/** One item of a response's `output`. (`ItemField` in the spec) */
export type ItemField = Schemas["ItemField"];
/** A message output item. (`Message` in the spec) */
export type MessageItem = Schemas["Message"];
/** A `function_call` output item: the model asks for a tool call. (`FunctionCall` in the spec) */
export type FunctionCallItem = Schemas["FunctionCall"];
/** A `function_call_output` item as a response reports it. (`FunctionCallOutput` in the spec) */
export type FunctionCallOutputItem = Schemas["FunctionCallOutput"];
/** A `reasoning` output item: summary, raw reasoning text, `encrypted_content`. (`ReasoningBody` in the spec) */
export type ReasoningItem = Schemas["ReasoningBody"];
/** A `compaction` item: older context folded into opaque `encrypted_content`. (`CompactionBody` in the spec) */
export type CompactionItem = Schemas["CompactionBody"];
/** Token usage statistics that were recorded for the response. (`Usage` in the spec) */
export type Usage = Schemas["Usage"];
/** An error payload that was emitted for a streaming error event. (`ErrorPayload` in the spec) */
export type ErrorPayload = Schemas["ErrorPayload"];
/** The `error` of a failed response. (`Error` in the spec) */
export type ResponseError = Schemas["Error"];
/** A function tool as a response echoes it. (`FunctionTool` in the spec) */
export type FunctionTool = Schemas["FunctionTool"];

// Streaming events
/** A streaming event that indicated the response was created. (`ResponseCreatedStreamingEvent` in the spec) */
export type ResponseCreatedEvent = Schemas["ResponseCreatedStreamingEvent"];
/** A streaming event that indicated the response was queued. (`ResponseQueuedStreamingEvent` in the spec) */
export type ResponseQueuedEvent = Schemas["ResponseQueuedStreamingEvent"];
/** A streaming event that indicated the response was in progress. (`ResponseInProgressStreamingEvent` in the spec) */
export type ResponseInProgressEvent = Schemas["ResponseInProgressStreamingEvent"];
/** A streaming event that indicated the response was completed. (`ResponseCompletedStreamingEvent` in the spec) */
export type ResponseCompletedEvent = Schemas["ResponseCompletedStreamingEvent"];
/** A streaming event that indicated the response had failed. (`ResponseFailedStreamingEvent` in the spec) */
export type ResponseFailedEvent = Schemas["ResponseFailedStreamingEvent"];
/** A streaming event that indicated the response was incomplete. (`ResponseIncompleteStreamingEvent` in the spec) */
export type ResponseIncompleteEvent = Schemas["ResponseIncompleteStreamingEvent"];
/** A streaming event that indicated an output item was added to the response. (`ResponseOutputItemAddedStreamingEvent` in the spec) */
export type OutputItemAddedEvent = Schemas["ResponseOutputItemAddedStreamingEvent"];
/** A streaming event that indicated an output item was completed. (`ResponseOutputItemDoneStreamingEvent` in the spec) */
export type OutputItemDoneEvent = Schemas["ResponseOutputItemDoneStreamingEvent"];
/** A streaming event that indicated a content part was added. (`ResponseContentPartAddedStreamingEvent` in the spec) */
export type ContentPartAddedEvent = Schemas["ResponseContentPartAddedStreamingEvent"];
/** A streaming event that indicated a content part was completed. (`ResponseContentPartDoneStreamingEvent` in the spec) */
export type ContentPartDoneEvent = Schemas["ResponseContentPartDoneStreamingEvent"];
/** A streaming event that indicated output text was incrementally added. (`ResponseOutputTextDeltaStreamingEvent` in the spec) */
export type OutputTextDeltaEvent = Schemas["ResponseOutputTextDeltaStreamingEvent"];
/** A streaming event that indicated output text was completed. (`ResponseOutputTextDoneStreamingEvent` in the spec) */
export type OutputTextDoneEvent = Schemas["ResponseOutputTextDoneStreamingEvent"];
/** A streaming event that indicated an output text annotation was added. (`ResponseOutputTextAnnotationAddedStreamingEvent` in the spec) */
export type OutputTextAnnotationAddedEvent = Schemas["ResponseOutputTextAnnotationAddedStreamingEvent"];
/** A streaming event that indicated refusal text was incrementally added. (`ResponseRefusalDeltaStreamingEvent` in the spec) */
export type RefusalDeltaEvent = Schemas["ResponseRefusalDeltaStreamingEvent"];
/** A streaming event that indicated refusal text was completed. (`ResponseRefusalDoneStreamingEvent` in the spec) */
export type RefusalDoneEvent = Schemas["ResponseRefusalDoneStreamingEvent"];
/** A streaming event that indicated reasoning text was incrementally added. (`ResponseReasoningDeltaStreamingEvent` in the spec) */
export type ReasoningDeltaEvent = Schemas["ResponseReasoningDeltaStreamingEvent"];
/** A streaming event that indicated reasoning text was completed. (`ResponseReasoningDoneStreamingEvent` in the spec) */
export type ReasoningDoneEvent = Schemas["ResponseReasoningDoneStreamingEvent"];
/** A streaming event that indicated a reasoning summary part was added. (`ResponseReasoningSummaryPartAddedStreamingEvent` in the spec) */
export type ReasoningSummaryPartAddedEvent = Schemas["ResponseReasoningSummaryPartAddedStreamingEvent"];
/** A streaming event that indicated a reasoning summary part was completed. (`ResponseReasoningSummaryPartDoneStreamingEvent` in the spec) */
export type ReasoningSummaryPartDoneEvent = Schemas["ResponseReasoningSummaryPartDoneStreamingEvent"];
/** A streaming event that indicated a reasoning summary was incrementally added. (`ResponseReasoningSummaryDeltaStreamingEvent` in the spec) */
export type ReasoningSummaryTextDeltaEvent = Schemas["ResponseReasoningSummaryDeltaStreamingEvent"];
/** A streaming event that indicated a reasoning summary was completed. (`ResponseReasoningSummaryDoneStreamingEvent` in the spec) */
export type ReasoningSummaryTextDoneEvent = Schemas["ResponseReasoningSummaryDoneStreamingEvent"];
/** A streaming event that indicated function call arguments were incrementally added. (`ResponseFunctionCallArgumentsDeltaStreamingEvent` in the spec) */
export type FunctionCallArgumentsDeltaEvent = Schemas["ResponseFunctionCallArgumentsDeltaStreamingEvent"];
/** A streaming event that indicated function call arguments were completed. (`ResponseFunctionCallArgumentsDoneStreamingEvent` in the spec) */
export type FunctionCallArgumentsDoneEvent = Schemas["ResponseFunctionCallArgumentsDoneStreamingEvent"];
/** A streaming event that indicated an error was emitted. (`ErrorStreamingEvent` in the spec) */
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
