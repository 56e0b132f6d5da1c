/**
 * The demo model's memory of the conversation: facts the user stated ("my name is Ada", "my
 * favourite colour is teal") are read from every user message it sees — the whole conversation,
 * so also a context bundle or a resent history — and questions about them ("what is my name?")
 * are answered from them. A statement alone is acknowledged. Nothing else is remembered: this is
 * what lets a test (or a curious user) see that earlier turns and runs reached the model.
 */

/** A fact a user stated about themselves: `subject` ("name"), `value` ("Ada"). */
export interface StatedFact {
  subject: string;
  value: string;
}

// A subject is one to three words ("name", "favourite colour", "home town").
const SUBJECT = "([a-z]+(?:[ -][a-z]+){0,2}?)";
// "my <subject> is <value>": the value runs to the end of the clause ("… and my …" starts another).
const STATEMENT = new RegExp(
  `\\bmy\\s+${SUBJECT}\\s+(?:is|are|was)\\s+([^.?!;,\\n]+?)(?=\\s+and\\s+my\\b|[.?!;,\\n]|$)`,
  "gi",
);
// "what is my <subject>?", "what's my …", "do you remember my …", "tell me my …"
const QUESTION = new RegExp(
  `\\b(?:what(?:'s|’s|\\s+is|\\s+are|\\s+was|\\s+were)|do\\s+you\\s+(?:remember|know)|tell\\s+me|remind\\s+me\\s+of)\\s+my\\s+${SUBJECT}(?=\\s*(?:[?.!,;]|$)|\\s+(?:and|again)\\b)`,
  "gi",
);

/** Facts stated in `texts` (oldest first); a later statement of the same subject wins. */
export function statedFacts(texts: readonly string[]): Map<string, StatedFact> {
  const facts = new Map<string, StatedFact>();
  for (const text of texts) {
    for (const sentence of sentences(text)) {
      if (sentence.trim().endsWith("?")) continue;
      for (const m of sentence.matchAll(STATEMENT)) {
        const subject = normalize(m[1] ?? "");
        const value = (m[2] ?? "").trim().replace(/^["'“”]+|["'“”]+$/g, "");
        if (subject !== "" && value !== "") facts.set(subject, { subject, value });
      }
    }
  }
  return facts;
}

/** The subjects `text` asks about, in order ("what is my name?" → ["name"]). */
export function askedSubjects(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(QUESTION)) {
    const subject = normalize(m[1] ?? "");
    if (subject !== "" && !out.includes(subject)) out.push(subject);
  }
  return out;
}

/**
 * The reply to `last` (the latest user message) given every user message of the conversation
 * (`userTexts`, oldest first, `last` included): answers about stated facts, or an acknowledgement
 * of facts `last` states; undefined when `last` neither asks about nor states one.
 */
export function recallReply(userTexts: readonly string[], last: string): string | undefined {
  const asked = askedSubjects(last);
  if (asked.length > 0) {
    const facts = statedFacts(userTexts.slice(0, -1));
    return asked
      .map((subject) => {
        const fact = facts.get(subject);
        return fact === undefined
          ? `You haven’t told me your ${subject} in this conversation.`
          : `Your ${fact.subject} is ${fact.value}.`;
      })
      .join(" ");
  }
  const stated = [...statedFacts([last]).values()];
  if (stated.length === 0) return undefined;
  return `Noted: ${stated.map((f) => `your ${f.subject} is ${f.value}`).join(", ")}.`;
}

function sentences(text: string): string[] {
  return text.split(/(?<=[.?!\n])\s+/);
}

/** "Favourite  Colour" → "favourite colour". */
function normalize(subject: string): string {
  return subject.trim().toLowerCase().replace(/\s+/g, " ");
}
