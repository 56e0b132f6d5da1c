/**
 * A value-taking option followed by a flag: commander takes the next word as the value whatever
 * it is, so `eddy run --model --allow-write "…"` ran with the model "--allow-write" and without
 * the permission the user typed (docs/pitfalls.md #93). Before parsing, every command's options
 * that need a value are checked against the word after them: one that starts with `--`, or is
 * one of the command's own short flags (`-h`), is a usage error naming the option. A value that
 * really starts with `--` is written `--model=--VALUE`; a word with a single dash that is not a
 * flag (`-5`, `-x`, `-`) stays a value.
 */
import type { Command, Option } from "commander";
import { EddyError } from "../errors.js";
import { terminalSafe } from "./terminal.js";

/** The help flags commander adds to every command (not in `command.options`). */
const HELP_FLAGS = ["-h", "--help"];

/**
 * Throws a usage error for the first option of `argv` that needs a value and is followed by a
 * flag instead (see the module comment). Walks `argv` as commander does: a command's name
 * selects it, `--` ends the options, `--name=value` carries its own value.
 */
export function refuseFlagsAsValues(program: Command, argv: readonly string[]): void {
  let command = program;
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] as string;
    if (word === "--") return;
    if (!word.startsWith("-")) {
      const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
      if (sub !== undefined) command = sub;
      continue;
    }
    const option = valueOption(command, word);
    if (option === undefined) continue;
    const value = argv[i + 1];
    if (value !== undefined && isFlag(command, value)) {
      const name = option.long ?? word;
      throw new EddyError(
        "invalid_argument",
        `${name} needs a value, but the next word is the flag ${shown(value)}: give ${name} its value (a value that really starts with "-" is written ${name}=VALUE)`,
        { fault: "user", details: { option: name } },
      );
    }
    i++; // the value
  }
}

/** The word as the message quotes it: on one line, without control characters, at most 40 characters. */
function shown(word: string): string {
  const cut = [...word];
  return terminalSafe(cut.length > 40 ? `${cut.slice(0, 40).join("")}…` : word, { oneLine: true });
}

/** The option `word` names on `command` when it takes a required value (`--model <name>`). */
function valueOption(command: Command, word: string): Option | undefined {
  return command.options.find((o) => o.required && (o.long === word || o.short === word));
}

/** A word commander would read as a flag of `command`: any `--…`, or one of its short flags. */
function isFlag(command: Command, word: string): boolean {
  if (word.startsWith("--")) return true;
  if (!word.startsWith("-") || word.length < 2) return false;
  return HELP_FLAGS.includes(word) || command.options.some((o) => o.short === word);
}
