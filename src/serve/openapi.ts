/**
 * `GET /openapi.json`: an OpenAPI 3.1 document generated from the route table (api.ts) and the
 * same schemas the handler validates with — the RunSpec's JSON Schema (`runSpecSchema`, loop/
 * run-spec.ts) included — so the description cannot drift from what the server does.
 */
import { z } from "zod";
import { runSpecSchema } from "../loop/run-spec.js";
import { EDDY_VERSION } from "../version.js";
import {
  decisionBody,
  FACE_ROUTES,
  messageBody,
  ROUTES,
  type RouteBody,
  type RouteInfo,
  steerBody,
} from "./api.js";

type Json = Record<string, unknown>;

/** The OpenAPI document of the server (built once; pure data). */
export function openApiDocument(): Json {
  const paths: Record<string, Record<string, Json>> = {};
  for (const route of [...ROUTES, ...FACE_ROUTES]) {
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, Json>)[route.method.toLowerCase()] = operationOf(route);
  }
  const { $schema: _drop, $id: _id, ...runSpec } = runSpecSchema as Json;
  return {
    openapi: "3.1.0",
    info: {
      title: "eddy serve",
      version: EDDY_VERSION,
      description:
        "The eddy agent runtime as a service: start, watch, cancel and decide runs; threads; an Open Responses face at /v1/responses.",
    },
    components: {
      schemas: { RunSpec: runSpec },
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
    },
    security: [{ bearer: [] }],
    paths,
  };
}

function operationOf(route: RouteInfo): Json {
  const op: Json = { operationId: route.operationId, summary: route.summary };
  const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
    name: m[1],
    in: "path",
    required: true,
    schema: { type: "string" },
  }));
  if (route.path.endsWith("/events"))
    params.push({
      name: "Last-Event-ID",
      in: "header",
      required: false,
      schema: { type: "string" },
    } as never);
  if (params.length > 0) op.parameters = params;
  if (route.body !== undefined)
    op.requestBody = { required: true, content: { "application/json": { schema: bodySchema(route.body) } } };
  const responses: Json = {};
  for (const [status, answer] of Object.entries(route.responses)) {
    const out: Json = { description: answer.description };
    if (answer.sse === true) out.content = { "text/event-stream": { schema: { type: "string" } } };
    else if (answer.schema !== undefined)
      out.content = { "application/json": { schema: schemaOf(answer.schema) } };
    responses[status] = out;
  }
  op.responses = responses;
  return op;
}

function bodySchema(body: RouteBody): Json {
  switch (body) {
    case "run_spec":
      return { $ref: "#/components/schemas/RunSpec" };
    case "decision":
      return schemaOf(decisionBody);
    case "message":
      return schemaOf(messageBody);
    case "steer":
      return schemaOf(steerBody);
    default:
      return {
        type: "object",
        required: ["model"],
        description:
          'An Open Responses CreateResponseBody (the schema of that name in the Open Responses spec); model "eddy" is the server\'s own',
      };
  }
}

function schemaOf(schema: z.ZodType | "run_spec"): Json {
  if (schema === "run_spec") return { $ref: "#/components/schemas/RunSpec" };
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, {
    io: "output",
    unrepresentable: "any",
  }) as Json;
  return rest;
}
