import { describe, expect, it } from "vitest";
import { lazyObject, once } from "./lazy-object.js";

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

describe("once", () => {
  it("builds on the first call only, and keeps what it built (undefined included)", () => {
    let builds = 0;
    const value = once(() => {
      builds++;
      return { n: builds };
    });
    expect(builds).toBe(0);
    expect(value()).toBe(value());
    expect(value()).toEqual({ n: 1 });
    expect(builds).toBe(1);
    let empties = 0;
    const nothing = once(() => {
      empties++;
      return undefined;
    });
    nothing();
    nothing();
    expect(empties).toBe(1);
  });

  it("builds again after a build that threw (nothing was kept)", () => {
    let calls = 0;
    const flaky = once(() => {
      calls++;
      if (calls === 1) throw new Error("first");
      return calls;
    });
    expect(() => flaky()).toThrow("first");
    expect(flaky()).toBe(2);
    expect(flaky()).toBe(2);
  });
});
