/**
 * A local OTLP/HTTP trace receiver (node:http on 127.0.0.1): it accepts `POST /v1/traces` with the
 * OTLP JSON encoding, as @opentelemetry/exporter-trace-otlp-http sends it, and keeps every span
 * with its attributes decoded to plain values.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/** An OTLP `AnyValue` decoded. */
export type AttrValue = string | number | boolean | null | AttrValue[];

/** A received span, attributes decoded. */
export interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, AttrValue>;
  events: Array<{ name: string; attributes: Record<string, AttrValue> }>;
  status: { code?: number; message?: string };
  resource: Record<string, AttrValue>;
}

export interface OtlpReceiver {
  /** The base URL to use as OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** Every request body as received (to check what never travels, e.g. secrets). */
  bodies: string[];
  /** Content types of the requests. */
  contentTypes: string[];
  close(): Promise<void>;
}

interface OtlpKeyValue {
  key: string;
  value: Record<string, unknown>;
}

function decodeValue(v: Record<string, unknown> | undefined): AttrValue {
  if (v === undefined) return null;
  if ("stringValue" in v) return String(v.stringValue);
  if ("intValue" in v) return Number(v.intValue);
  if ("doubleValue" in v) return Number(v.doubleValue);
  if ("boolValue" in v) return Boolean(v.boolValue);
  if ("arrayValue" in v) {
    const values = ((v.arrayValue as { values?: Array<Record<string, unknown>> }).values ?? []) as Array<
      Record<string, unknown>
    >;
    return values.map(decodeValue);
  }
  return null;
}

function decodeAttributes(list: OtlpKeyValue[] | undefined): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  for (const kv of list ?? []) out[kv.key] = decodeValue(kv.value);
  return out;
}

const nanosToMs = (n: unknown) => Number(BigInt(String(n ?? 0)) / 1_000_000n);

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const contentTypes: string[] = [];
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    if (req.method !== "POST" || req.url !== "/v1/traces") {
      res.writeHead(404).end();
      return;
    }
    bodies.push(body);
    contentTypes.push(String(req.headers["content-type"]));
    const payload = JSON.parse(body) as {
      resourceSpans?: Array<{
        resource?: { attributes?: OtlpKeyValue[] };
        scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }>;
      }>;
    };
    for (const rs of payload.resourceSpans ?? []) {
      const resource = decodeAttributes(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          const span: ReceivedSpan = {
            name: String(s.name),
            traceId: String(s.traceId),
            spanId: String(s.spanId),
            kind: Number(s.kind),
            startMs: nanosToMs(s.startTimeUnixNano),
            endMs: nanosToMs(s.endTimeUnixNano),
            attributes: decodeAttributes(s.attributes as OtlpKeyValue[]),
            events: ((s.events ?? []) as Array<{ name: string; attributes?: OtlpKeyValue[] }>).map((e) => ({
              name: e.name,
              attributes: decodeAttributes(e.attributes),
            })),
            status: (s.status ?? {}) as { code?: number; message?: string },
            resource,
          };
          if (typeof s.parentSpanId === "string" && s.parentSpanId !== "") span.parentSpanId = s.parentSpanId;
          spans.push(span);
        }
      }
    }
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    contentTypes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A collector that accepts connections and reads requests but never answers (a hung proxy, a stuck collector). */
export interface SilentCollector {
  /** The base URL to use as OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  /** Requests it was sent (counted by their first line). */
  readonly requests: number;
  close(): Promise<void>;
}

/** Starts a silent collector on 127.0.0.1. */
export async function startSilentCollector(): Promise<SilentCollector> {
  const { createServer: createTcpServer } = await import("node:net");
  const sockets = new Set<import("node:net").Socket>();
  let requests = 0;
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on("data", (chunk: Buffer) => {
      if (chunk.toString("latin1").startsWith("POST ")) requests++;
    });
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return requests;
    },
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
