// Re-syncs the vendored Open Responses OpenAPI document and regenerates everything derived from it:
//   src/protocol/generated/openapi.ts      TypeScript types (openapi-typescript, OpenAPI 3.1)
//   src/protocol/generated/event-types.ts  the streaming event `type` literal union + runtime array
//   src/protocol/generated/enums.ts        every string enum of the spec (`*Enum` schemas) + input size limits
//   src/protocol/generated/response-validators.cjs  ajv (draft 2020-12) standalone validators, compiled
//   src/protocol/generated/request-validators.cjs   once here, of what a server sends and of what a
//                                                   client sends (CommonJS, so src/protocol/validate.ts
//                                                   can require() each on first use: a run without
//                                                   validation never loads them, a client never loads
//                                                   the request side)
//   src/protocol/generated/*-validators.d.cts       their declarations
//   src/protocol/generated/validator-groups.ts      which schemas are on the request side
//
// Usage:
//   scripts/update-openresponses-types [PATH_OR_URL]   copy PATH_OR_URL byte-exact into schemas/, regenerate
//   scripts/update-openresponses-types                 regenerate from the vendored copy
//   scripts/update-openresponses-types --check         exit 1 if any generated file is stale (used by tests)
import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Ajv2020Module from "ajv/dist/2020.js";
import standaloneModule from "ajv/dist/standalone/index.js";
import openapiTS, { astToString } from "openapi-typescript";

const Ajv2020 = Ajv2020Module.default ?? Ajv2020Module;
const standaloneCode = standaloneModule.default ?? standaloneModule;

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const specPath = join(root, "schemas/openresponses/openapi.json");
const outDir = join(root, "src/protocol/generated");
const STREAM_CONTENT_TYPE = "text/event-stream";

/** Keywords that are OpenAPI annotations rather than JSON Schema 2020-12 vocabulary. */
function isOpenApiOnlyKeyword(key) {
  return (
    key === "discriminator" ||
    key === "example" ||
    key === "xml" ||
    key === "externalDocs" ||
    key.startsWith("x-")
  );
}

/**
 * Deep copy of a schema with OpenAPI-only keywords removed and `#/components/schemas/X` refs rewritten.
 * A `discriminator` is kept (as ajv's `discriminator` keyword) where ajv can use it: see
 * `discriminatedUnion`.
 */
function toJsonSchema(node, schemas, insideProperties = false) {
  if (Array.isArray(node)) return node.map((n) => toJsonSchema(n, schemas));
  if (node === null || typeof node !== "object") return node;
  const union = insideProperties ? null : discriminatedUnion(node, schemas);
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    if (insideProperties) {
      out[key] = toJsonSchema(value, schemas);
      continue;
    }
    if (isOpenApiOnlyKeyword(key)) continue;
    if (key === "$ref" && typeof value === "string") {
      if (union) continue; // moved into `oneOf` below
      out.$ref = rewriteRef(value);
      continue;
    }
    out[key] = toJsonSchema(
      value,
      schemas,
      key === "properties" || key === "patternProperties" || key === "$defs",
    );
  }
  if (union) {
    out.oneOf = union.members.map((ref) => ({ $ref: rewriteRef(ref) }));
    out.discriminator = { propertyName: union.propertyName };
  }
  return insideProperties ? out : nullableShortcut(out);
}

const ANNOTATIONS = new Set(["description", "title", "default", "examples", "deprecated"]);

/**
 * `anyOf: [X, {type: "null"}]` (the spec's nullable fields) made cheap, with the same meaning:
 * `type: [T, "null"]` when X is a bare `{type: T}`, else `if: {type: "null"}, else: X`. ajv
 * evaluates an `if` without creating errors, where `anyOf` allocates an error object for the failed
 * branch of every null (or non-null) value, and a ResponseResource has a dozen of them; and a
 * failed `else` reports X's own errors, not "must match a schema in anyOf".
 */
function nullableShortcut(schema) {
  const branches = schema.anyOf;
  if (!Array.isArray(branches) || branches.length !== 2) return schema;
  if (["type", "if", "then", "else", "oneOf", "allOf", "not"].some((k) => k in schema)) return schema;
  const isNull = (b) => b?.type === "null" && Object.keys(b).every((k) => k === "type" || ANNOTATIONS.has(k));
  const nullIndex = branches.findIndex(isNull);
  if (nullIndex === -1) return schema;
  const other = branches[1 - nullIndex];
  const { anyOf: _anyOf, ...rest } = schema;
  if (typeof other.type === "string" && Object.keys(other).every((k) => k === "type" || ANNOTATIONS.has(k))) {
    return { ...rest, type: [other.type, "null"] };
  }
  return { ...rest, if: { type: "null" }, else: other };
}

function rewriteRef(ref) {
  return ref.replace("#/components/schemas/", "openresponses.json#/$defs/");
}

/**
 * The spec tags its unions with `discriminator: {propertyName: "type"}` (no mapping). Where every
 * member is a `$ref` to a schema that requires `type` with a single literal value, and the values
 * are unique, ajv's own `discriminator` keyword validates exactly as `oneOf` does, but checks only
 * the member the tag selects. That is faster and, above all, gives the errors of *that* member
 * (e.g. "/part/annotations/0/type must be equal to one of the allowed values") instead of one
 * error per member, and a clear "tag value not in the union" error for a type the spec lacks.
 * A lone `$ref` with a discriminator (the spec's one-member unions `Annotation`, `Tool`) becomes a
 * one-member `oneOf` so the tag is checked first. Anything else keeps plain `oneOf` semantics.
 */
function discriminatedUnion(node, schemas) {
  // A `oneOf` the spec does not mark (e.g. TextField.format) qualifies too when it meets the rules.
  const propertyName = node.discriminator?.propertyName ?? (Array.isArray(node.oneOf) ? "type" : undefined);
  if (typeof propertyName !== "string" || node.discriminator?.mapping) return null;
  let members;
  if (Array.isArray(node.oneOf) && !("$ref" in node)) members = node.oneOf.map((m) => m?.$ref);
  else if (typeof node.$ref === "string" && node.discriminator && !("oneOf" in node) && !("anyOf" in node))
    members = [node.$ref];
  else return null;
  const tags = new Set();
  for (const ref of members) {
    if (typeof ref !== "string" || !ref.startsWith("#/components/schemas/")) return null;
    const target = schemas[ref.slice("#/components/schemas/".length)];
    const prop = target?.properties?.[propertyName];
    const values = prop?.const !== undefined ? [prop.const] : prop?.enum;
    if (!Array.isArray(values) || values.length !== 1 || typeof values[0] !== "string") return null;
    if (!Array.isArray(target.required) || !target.required.includes(propertyName)) return null;
    if (tags.has(values[0])) return null;
    tags.add(values[0]);
  }
  return { propertyName, members };
}

function withoutDiscriminators(node) {
  if (Array.isArray(node)) return node.map(withoutDiscriminators);
  if (node === null || typeof node !== "object") return node;
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "discriminator" && typeof value === "object" && value !== null && "propertyName" in value)
      continue;
    out[key] = withoutDiscriminators(value);
  }
  return out;
}

function streamingEventSchemas(spec) {
  const schema = spec.paths["/responses"].post.responses["200"].content[STREAM_CONTENT_TYPE].schema;
  return schema.oneOf.map((ref) => {
    const name = ref.$ref.replace("#/components/schemas/", "");
    const def = spec.components.schemas[name];
    const type = def.properties.type.enum?.[0] ?? def.properties.type.default;
    if (typeof type !== "string") throw new Error(`streaming event schema ${name} has no literal type`);
    return { name, type };
  });
}

function unionMembers(spec, unionName) {
  return spec.components.schemas[unionName].oneOf.map((ref) => ref.$ref.replace("#/components/schemas/", ""));
}

async function generate(specText) {
  const spec = JSON.parse(specText);
  const version = spec.info.version;
  const sha = createHash("sha256").update(specText).digest("hex");
  const banner = `// GENERATED by scripts/update-openresponses-types from schemas/openresponses/openapi.json\n// (Open Responses ${version}, sha256 ${sha}). Do not edit by hand.\n`;

  // 1. Types. The spec's `discriminator`s carry no mapping, so openapi-typescript would replace each event's
  // `type` literal with its schema name; the literal `enum`s already discriminate, so drop them here.
  const ast = await openapiTS(withoutDiscriminators(spec), { alphabetize: false, exportType: true });
  const typesTs = `${banner}/* eslint-disable */\n${astToString(ast)}`;

  // 2. Streaming event types.
  const events = streamingEventSchemas(spec);
  const eventTypesTs = `${banner}
/** The ${events.length} streaming event \`type\` values of Open Responses ${version}, in the order the spec lists them. */
export const STREAMING_EVENT_TYPES = [
${events.map((e) => `  ${JSON.stringify(e.type)},`).join("\n")}
] as const;

/** One streaming event \`type\` value defined by the spec. */
export type StreamingEventType = (typeof STREAMING_EVENT_TYPES)[number];

/** The component schema that defines each streaming event type. */
export const STREAMING_EVENT_SCHEMA_NAMES = {
${events.map((e) => `  ${JSON.stringify(e.type)}: ${JSON.stringify(e.name)},`).join("\n")}
} as const satisfies Record<StreamingEventType, string>;

/** The Open Responses spec release these files were generated from. */
export const OPENRESPONSES_SPEC_VERSION = ${JSON.stringify(version)};

/** sha256 of the vendored openapi.json these files were generated from. */
export const OPENRESPONSES_SPEC_SHA256 = ${JSON.stringify(sha)};
`;

  // 3. String enums and size limits, so options are checked against the spec, not hand lists.
  const enums = Object.entries(spec.components.schemas).filter(
    ([, def]) => def.type === "string" && Array.isArray(def.enum),
  );
  const maxLength = (schema, prop) =>
    spec.components.schemas[schema].properties[prop].anyOf.find((s) => s.type === "string").maxLength;
  const enumsTs = `${banner}
/** Every string enum of Open Responses ${version} (its \`*Enum\` component schemas), values in spec order. */
export const SPEC_ENUMS = {
${enums.map(([name, def]) => `  ${name}: [${def.enum.map((v) => JSON.stringify(v)).join(", ")}],`).join("\n")}
} as const;

/** The name of a string enum of the spec. */
export type SpecEnumName = keyof typeof SPEC_ENUMS;

/** Longest \`input_image.image_url\` (a URL or a base64 data URL), in characters. */
export const INPUT_IMAGE_URL_MAX_LENGTH = ${maxLength("InputImageContentParamAutoParam", "image_url")};

/** Longest \`input_file.file_data\` (base64 data), in characters. */
export const INPUT_FILE_DATA_MAX_LENGTH = ${maxLength("InputFileContentParam", "file_data")};
`;

  // 4. Validators. Every component schema goes under one $defs document so refs resolve once.
  const defs = {};
  for (const [name, def] of Object.entries(spec.components.schemas))
    defs[name] = toJsonSchema(def, spec.components.schemas);
  const ajv = new Ajv2020({
    code: { source: true, esm: false, lines: false, optimize: 1 },
    strict: true,
    strictRequired: false,
    strictTypes: false,
    allowUnionTypes: true,
    allErrors: true,
    discriminator: true,
    messages: true,
    validateFormats: false,
  });
  ajv.addSchema({ $id: "openresponses.json", $defs: defs });

  // Two modules, so a client loads only the side it checks (src/protocol/validate.ts): what a server
  // sends (the streaming events and what they embed: the response, its output items, usage, errors)
  // and what a client sends (the request body and its input items, checked by the mock and
  // `toResponsesInput`): a client's run loads 480 of the 715 kB. Each module carries the code it calls.
  const responseSide = [
    ...events.map((e) => e.name),
    "ResponseResource",
    "ItemField",
    ...unionMembers(spec, "ItemField"),
    "ErrorPayload",
    "Usage",
    // WebSocket mode's failure message (`x-openresponses-websocket`): src/protocol/validate.ts.
    "WebSocketErrorEvent",
  ];
  const requestSide = ["CreateResponseBody", "ItemParam", ...unionMembers(spec, "ItemParam")];
  const refsOf = (names) => {
    const refs = {};
    for (const name of [...new Set(names)].sort())
      refs[`validate${name}`] = `openresponses.json#/$defs/${name}`;
    return refs;
  };
  const declarations = (refs) => `${banner}
/** An ajv standalone validator: returns true when valid; otherwise \`errors\` holds what failed. */
export interface CompiledValidator {
  (data: unknown): boolean;
  errors?: { instancePath: string; schemaPath: string; keyword: string; params: Record<string, unknown>; message?: string }[] | null;
}
${Object.keys(refs)
  .map((n) => `export declare const ${n}: CompiledValidator;`)
  .join("\n")}
`;
  const responseRefs = refsOf(responseSide);
  const requestRefs = refsOf(requestSide);
  const overlap = Object.keys(requestRefs).filter((n) => n in responseRefs);
  if (overlap.length > 0) throw new Error(`schemas on both sides: ${overlap.join(", ")}`);
  const groupsTs = `${banner}
/** The schemas whose validators are in request-validators.cjs; every other one is in response-validators.cjs. */
export const REQUEST_SIDE_SCHEMAS: ReadonlySet<string> = new Set([
${Object.keys(requestRefs)
  .map((n) => `  ${JSON.stringify(n.slice("validate".length))},`)
  .join("\n")}
]);
`;

  return new Map([
    [join(outDir, "openapi.ts"), typesTs],
    [join(outDir, "event-types.ts"), eventTypesTs],
    [join(outDir, "enums.ts"), enumsTs],
    [join(outDir, "response-validators.cjs"), `${banner}${standaloneCode(ajv, responseRefs)}\n`],
    [join(outDir, "response-validators.d.cts"), declarations(responseRefs)],
    [join(outDir, "request-validators.cjs"), `${banner}${standaloneCode(ajv, requestRefs)}\n`],
    [join(outDir, "request-validators.d.cts"), declarations(requestRefs)],
    [join(outDir, "validator-groups.ts"), groupsTs],
  ]);
}

async function readSource(source) {
  if (/^https?:\/\//.test(source)) {
    const res = await fetch(source);
    if (!res.ok) throw new Error(`GET ${source} answered HTTP ${res.status}`);
    return Buffer.from(await res.arrayBuffer());
  }
  return readFile(source);
}

async function main(argv) {
  const check = argv.includes("--check");
  const source = argv.find((a) => !a.startsWith("--"));
  if (source) {
    const bytes = await readSource(source);
    JSON.parse(bytes.toString("utf8")); // refuse to vendor something that is not JSON
    await writeFile(specPath, bytes);
    process.stdout.write(
      `vendored ${source} -> schemas/openresponses/openapi.json (${bytes.length} bytes)\n`,
    );
  }
  const specText = await readFile(specPath, "utf8");
  const files = await generate(specText);
  const stale = [];
  for (const [path, content] of files) {
    let current = null;
    try {
      current = await readFile(path, "utf8");
    } catch {}
    if (current === content) continue;
    stale.push(path.slice(root.length + 1));
    if (!check) await writeFile(path, content);
  }
  if (check) {
    if (stale.length > 0) {
      process.stderr.write(
        `generated protocol files are stale: ${stale.join(", ")}\nrun scripts/update-openresponses-types\n`,
      );
      return 1;
    }
    process.stdout.write("generated protocol files are up to date\n");
    return 0;
  }
  process.stdout.write(
    stale.length ? `regenerated ${stale.join(", ")}\n` : "generated files already up to date\n",
  );
  return 0;
}

process.exitCode = await main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`update-openresponses-types: ${err instanceof Error ? err.message : String(err)}\n`);
  return 2;
});
