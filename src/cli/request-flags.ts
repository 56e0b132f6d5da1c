/**
 * The `eddy run` flags of issue 17: request options (checked against the spec's enums and bounds
 * as they are parsed, so a bad value is a usage error naming the allowed values), native and
 * hosted tools, attachments and `--continue-incomplete`.
 */
import { type Command, InvalidArgumentError, Option } from "commander";
import { HOSTED_TOOL_NAMES } from "../loop/hosted-tools.js";
import {
  allowedValues,
  parseMetadataPair,
  REQUEST_OPTION_NAMES,
  type RequestOptions,
  requestOptionProblem,
} from "../loop/request-options.js";

/** A parser that checks one value of a request option against the spec. */
function checked<T>(option: keyof RequestOptions, convert: (text: string) => T): (text: string) => T {
  return (text) => {
    const value = convert(text);
    const problem = requestOptionProblem(option, value);
    if (problem !== undefined)
      throw new InvalidArgumentError(`${REQUEST_OPTION_NAMES[option].flag} ${problem}`);
    return value;
  };
}

function repeatable<T>(parse: (text: string) => T): (text: string, previous: T[] | undefined) => T[] {
  return (text, previous) => [...(previous ?? []), parse(text)];
}

const toNumber = (text: string): number => (text.trim() === "" ? Number.NaN : Number(text));

function enumOption(option: keyof RequestOptions, description: string): Option {
  const { flag } = REQUEST_OPTION_NAMES[option];
  return new Option(`${flag} <value>`, `${description}: ${allowedValues(option)?.join(", ")}`).argParser(
    checked(option, (t) => t),
  );
}

/** Adds the request-option, tool and attachment flags to `eddy run` (or `eddy config`). */
export function addRequestOptions(command: Command): Command {
  return command
    .addOption(enumOption("reasoningEffort", "reasoning.effort"))
    .addOption(enumOption("reasoningSummary", "reasoning.summary"))
    .addOption(enumOption("verbosity", "text.verbosity"))
    .addOption(
      new Option("--max-output-tokens <n>", "max_output_tokens (≥ 16)").argParser(
        checked("maxOutputTokens", toNumber),
      ),
    )
    .addOption(
      new Option("--temperature <t>", "temperature (0 to 2)").argParser(checked("temperature", toNumber)),
    )
    .addOption(new Option("--top-p <p>", "top_p (0 to 1)").argParser(checked("topP", toNumber)))
    .addOption(enumOption("serviceTier", "service_tier"))
    .addOption(
      new Option("--prompt-cache-key <key>", "prompt_cache_key (≤ 64 characters)").argParser(
        checked("promptCacheKey", (t) => t),
      ),
    )
    .addOption(
      new Option(
        "--include <value>",
        `add to include (repeatable): ${allowedValues("include")?.join(", ")}`,
      ).argParser(repeatable(checked("include", (t) => t))),
    )
    .addOption(
      new Option("--metadata <k=v>", "a metadata pair (repeatable, at most 16)").argParser(
        (text: string, previous: Record<string, string> | undefined) => {
          const pair = parseMetadataPair(text);
          if (typeof pair === "string") throw new InvalidArgumentError(`--metadata ${pair}`);
          return { ...previous, [pair[0]]: pair[1] };
        },
      ),
    )
    .option(
      "--native-tools",
      "offer OpenAI's native apply_patch, shell and custom tools and run their items (default: on for openai and azure)",
    )
    .addOption(
      new Option(
        "--tool <name[:arg]>",
        `a hosted tool the provider runs (repeatable): ${Object.keys(HOSTED_TOOL_NAMES).join(", ")} (file_search:VECTOR_STORE_ID, mcp:LABEL=URL)`,
      ).argParser(repeatable((t: string) => t)),
    )
    .addOption(
      new Option("--image <path|url>", "attach an image to the prompt (repeatable)").argParser(
        repeatable((t: string) => t),
      ),
    )
    .addOption(
      new Option("--file <path|url>", "attach a file (e.g. a PDF) to the prompt (repeatable)").argParser(
        repeatable((t: string) => t),
      ),
    )
    .option(
      "--continue-incomplete",
      "when the answer is cut off by max_output_tokens, ask the model once to continue",
    );
}
