import { describe, expect, it } from "vitest";
import { lazyObject } from "./lazy-object.js";

describe("lazyObject", () => {
  it("builds once, on the first read, and reads like the built object", () => {
    let builds = 0;
    const view = lazyObject(() => {
      builds++;
      return Object.freeze({ a: 1, nested: { b: [2] } });
    });
    expect(builds).toBe(0);
    expect(view.a).toBe(1);
    expect("nested" in view).toBe(true);
    expect(Object.keys(view)).toEqual(["a", "nested"]);
    expect({ ...view }).toEqual({ a: 1, nested: { b: [2] } });
    expect(JSON.parse(JSON.stringify(view))).toEqual({ a: 1, nested: { b: [2] } });
    const { a: _a, ...rest } = view;
    expect(rest).toEqual({ nested: { b: [2] } });
    expect(builds).toBe(1);
  });

  it("refuses writes like a frozen object", () => {
    const view = lazyObject(() => ({ a: 1 })) as { a: number; b?: number };
    expect(() => {
      view.a = 2;
    }).toThrow(TypeError);
    expect(() => {
      view.b = 2;
    }).toThrow(TypeError);
    expect(() => delete (view as { a?: number }).a).toThrow(TypeError);
    expect(view.a).toBe(1);
  });
});
