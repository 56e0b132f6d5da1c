/**
 * A read-only object built on first use: a constant whose construction costs more than most
 * processes that import its module ever need (`runSpecSchema`: zod's `toJSONSchema` at import
 * time was a measurable part of `eddy run`'s start-up, bench/README.md "Start-up").
 */

/**
 * A read-only view of `build()`'s result, built once, on the first read of a property or key
 * (`obj.x`, `in`, `Object.keys`, spread, `JSON.stringify`). Writes are refused (a TypeError in
 * strict code), as on a frozen object. It is a Proxy: `structuredClone` refuses it, so clone
 * `JSON.parse(JSON.stringify(view))` instead.
 */
export function lazyObject<T extends object>(build: () => T): Readonly<T> {
  let value: T | undefined;
  const built = (): T => {
    value ??= build();
    return value;
  };
  return new Proxy({} as T, {
    get: (_target, key) => Reflect.get(built(), key),
    has: (_target, key) => Reflect.has(built(), key),
    ownKeys: () => Reflect.ownKeys(built()),
    // Reported configurable: the (empty) proxy target has none of these properties, and a proxy
    // may not report a property the target lacks as non-configurable.
    getOwnPropertyDescriptor: (_target, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(built(), key);
      return descriptor === undefined ? undefined : { ...descriptor, configurable: true };
    },
    getPrototypeOf: () => Reflect.getPrototypeOf(built()),
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
  });
}

/**
 * `build()`'s result, made on the first call and kept: a constant too costly to make at import
 * (a zod schema a command may never parse with: bench/README.md, "Start-up").
 */
export function once<T>(build: () => T): () => T {
  let made = false;
  let value: T | undefined;
  return () => {
    if (!made) {
      value = build();
      made = true;
    }
    return value as T;
  };
}
