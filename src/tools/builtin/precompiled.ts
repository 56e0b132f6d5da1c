/**
 * The built-in tools' argument validators, compiled ahead of time (generated/validators.js, by
 * scripts/update-tool-validators.ts): registered once, so a registry of built-ins validates
 * arguments without loading ajv. A schema changed since generation is compiled by ajv instead.
 */
import { registerPrecompiled } from "../../util/schema.js";
import {
  apply_patch,
  grep,
  list_dir,
  read_file,
  SOURCES,
  shell,
  write_file,
} from "./generated/validators.js";
import { BUILTIN_PARAMETERS } from "./parameters.js";

const VALIDATORS = { read_file, list_dir, grep, write_file, apply_patch, shell };

let registered = false;

/** Registers the precompiled validators (once; later calls do nothing). */
export function registerBuiltinValidators(): void {
  if (registered) return;
  registered = true;
  for (const [name, schema] of Object.entries(BUILTIN_PARAMETERS)) {
    const key = name as keyof typeof BUILTIN_PARAMETERS;
    registerPrecompiled(schema, SOURCES[key], VALIDATORS[key]);
  }
}
