/**
 * `tool_choice` on the client side: which calls the run accepts (servers do not always enforce
 * it, docs/pitfalls.md #45; docs/decisions.md #6) and the reset of a forcing choice after the first tool round
 * (docs/pitfalls.md #43), so a `required` or named choice cannot loop forever.
 */
import type { ToolChoiceParam } from "../protocol/types.js";

/** Why a call is refused by `tool_choice`, or undefined when it is allowed. */
export function toolChoiceRefusal(
  choice: ToolChoiceParam | null | undefined,
  name: string,
): string | undefined {
  if (choice === undefined || choice === null || choice === "auto" || choice === "required") return undefined;
  if (choice === "none")
    return `tool_choice is "none": no tool may be called (the call to ${name} was not run)`;
  if (typeof choice === "object" && choice.type === "function") {
    return choice.name === name
      ? undefined
      : `tool_choice allows only ${choice.name} (the call to ${name} was not run)`;
  }
  if (typeof choice === "object" && choice.type === "allowed_tools") {
    if (choice.mode === "none") return `tool_choice allows no tool calls (the call to ${name} was not run)`;
    const allowed = choice.tools.map((t) => t.name);
    return allowed.includes(name)
      ? undefined
      : `tool_choice allows only ${allowed.join(", ")} (the call to ${name} was not run)`;
  }
  return undefined;
}

/** The choice for requests after a tool round: forcing choices become `auto` (allowed_tools keeps its list). */
export function relaxToolChoice(
  choice: ToolChoiceParam | null | undefined,
): ToolChoiceParam | null | undefined {
  if (choice === "required") return "auto";
  if (choice !== null && typeof choice === "object") {
    if (choice.type === "function") return "auto";
    if (choice.type === "allowed_tools" && choice.mode === "required") return { ...choice, mode: "auto" };
  }
  return choice;
}
