/**
 * Loads a package (or a `node:` built-in, or a file URL) the first time a feature needs it. Every
 * lazy `import()` eddy makes goes through here, for one reason: the CLI runs from one CommonJS
 * bundle compiled as a `vm.Script` (bin/eddy.js, src/cli/code-cache.ts, docs/decisions.md #40),
 * and code compiled that way cannot call `import()` itself. The build (scripts/build.mjs) swaps
 * this module, in the bundle only, for one that calls the launcher's `import()`; the library and
 * the tests use this one. The specifier resolves as it would from eddy's own files.
 */
export function importPackage<T>(specifier: string): Promise<T> {
  return import(specifier) as Promise<T>;
}
