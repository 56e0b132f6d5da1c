/**
 * `eddy/protocol`: the Open Responses spec (2026-04-24, vendored in `schemas/openresponses/`) as
 * TypeScript types and validators generated from it — every request, response, item and streaming
 * event type, the list of streaming event types, and ajv validators that return readable messages.
 *
 * @example
 * ```ts
 * import { validateStreamingEvent, type CreateResponseBody } from "eddy/protocol";
 *
 * const errors = validateStreamingEvent(JSON.parse(line)); // undefined when valid
 * ```
 *
 * @packageDocumentation
 */
export * from "../protocol/index.js";
