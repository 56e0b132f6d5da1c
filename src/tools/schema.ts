/** Tool parameter schemas: compiled once, at registration, by the generic schema compiler. */
import type { ZodType } from "zod";
import { type CompiledSchema, compileSchema } from "../util/schema.js";
import type { JsonSchema } from "./tool.js";

export type { CompiledSchema, SchemaCheck } from "../util/schema.js";
export { isZodSchema } from "../util/schema.js";

/** Compiles a tool's `parameters`; throws `invalid_config` naming the tool when they are unusable. */
export function compileToolSchema(toolName: string, parameters: JsonSchema | ZodType): CompiledSchema {
  return compileSchema(`tool "${toolName}"`, parameters);
}
