/**
 * The bound on a line diff, one definition for both places that diff a file's change with jsdiff:
 * the approval prompt in the terminal (src/cli/approval-view.ts) and the run viewer's page
 * (src/view/client/diff-view.ts, which scripts/build.mjs bundles for the browser on its own). It
 * imports nothing, so the page's bundle takes it as it is (docs/pitfalls.md #89, #114).
 */

/**
 * Most line edits (a changed line is two) a diff is computed for (jsdiff's `maxEditLength`). The
 * Myers diff takes time in proportion to lines × edits, on the main thread: a 4,000-line file
 * rewritten whole took 2.4 s before the approval prompt showed, a tape's 16,000-line rewrite froze
 * the viewer's page for 42 s. With this bound the worst case is ~0.1 s; a bigger change is shown as
 * the content it writes.
 */
export const DIFF_MAX_EDITS = 1_000;
