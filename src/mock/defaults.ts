/**
 * Every behaviour-altering default of the mock server in one place ("Options objects,
 * defaults in one place"). The CLI (`eddy mock`) and the library both read these.
 */
export const MOCK_DEFAULTS = {
  /** The listener binds here only: the mock is a local test double, never a public server. */
  host: "127.0.0.1",
  /** 0 = let the OS pick a free port. */
  port: 0,
  /** Middle part of every generated id: `resp_mock_0001`, `call_mock_0001`, … */
  idPrefix: "mock",
  /** Short forms in request bodies are rewritten to the spec's form (`"strict"` refuses them). */
  conformance: "lenient",
  /**
   * Connections open at once (HTTP keep-alive, event streams and WebSockets alike); one more is
   * closed as it comes, so a client opening thousands of idle sockets cannot take every file
   * descriptor (a slow or idle one is also cut at `LISTEN_TIMEOUTS.headersMs`, src/util/http-server.ts).
   */
  maxConnections: 1024,
  /** Largest request body accepted, in bytes (a bigger one is answered 413). */
  maxBodyBytes: 64 * 1024 * 1024,
  /** Output text is streamed in deltas of at most this many characters (cut after whitespace). */
  textDeltaChars: 12,
  /** Function-call arguments and reasoning text are streamed in fragments of this many characters. */
  fragmentChars: 8,
  /** The first this-many chunks of a stream carry one event each, so a client sees them at once. */
  unbatchedChunks: 16,
  /** Later, events produced back to back share a chunk: at most this many per chunk… */
  batchEvents: 32,
  /** …and at most about this many characters. */
  batchChars: 16 * 1024,
  /** `POST /responses/compact` keeps this many of the most recent user messages verbatim beside the compaction item. */
  compactKeepUserMessages: 2,
  /** The server remembers at most this many stored responses (the oldest go first)… */
  storeResponses: 10_000,
  /**
   * …and at most about this many characters of them (each counted as its whole context and output
   * as JSON, so a long chain counts its shared history again and again): 10,000 responses of 1 MiB
   * inputs filled the heap of a long-running `eddy serve`.
   */
  storeChars: 256 * 1024 * 1024,
  /** A WebSocket connection remembers at most this many `store: false` responses (the oldest go first). */
  websocketCacheSize: 1_000,
  /** …and at most about this many characters of them (counted as `storeChars` counts). */
  websocketCacheChars: 32 * 1024 * 1024,
  /** Past this many bytes queued on a WebSocket, the mock waits for the socket before sending more. */
  websocketHighWaterBytes: 64 * 1024,
  /** `incomplete_details.reason` of a scripted `incomplete` turn that names none. */
  incompleteReason: "max_output_tokens",
  /** Echoed settings a request leaves out (the values OpenAI reports for the same omissions). */
  response: {
    temperature: 1,
    top_p: 1,
    presence_penalty: 0,
    frequency_penalty: 0,
    top_logprobs: 0,
    truncation: "disabled",
    service_tier: "default",
    verbosity: "medium",
    parallel_tool_calls: true,
    store: true,
    background: false,
    /** A function tool declared without `strict` is reported with OpenAI's documented default. */
    strict: true,
  },
} as const;
