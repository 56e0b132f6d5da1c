import { describe, expect, it } from "vitest";
import {
  basicAuthorization,
  credentialSecrets,
  describeWithCredentials,
  splitUrlCredentials,
} from "./url-credentials.js";

describe("splitUrlCredentials", () => {
  it.each([
    ["http://host/v1", "http://host/v1", undefined],
    ["http://bob:hunter2@host:8080/v1", "http://host:8080/v1", { username: "bob", password: "hunter2" }],
    [
      "https://bob:p%40ss%3Aw0rd@host/v1?x=1",
      "https://host/v1?x=1",
      { username: "bob", password: "p@ss:w0rd" },
    ],
    ["http://token@host/v1", "http://host/v1", { username: "token", password: "" }],
    ["http://bob:pw@host:badport/v1", "http://host:badport/v1", { username: "bob", password: "pw" }],
    ["http://host/v1?next=a@b", "http://host/v1?next=a@b", undefined],
  ])("%s", (input, url, credentials) => {
    expect(splitUrlCredentials(input)).toEqual({ url, credentials });
  });
});

describe("using and hiding them", () => {
  const credentials = { username: "bob", password: "hunter2" };

  it("makes an RFC 7617 Basic header", () => {
    expect(basicAuthorization(credentials)).toBe(`Basic ${btoa("bob:hunter2")}`);
  });

  it("lists the password, its URL form and the header as secrets", () => {
    expect(credentialSecrets({ username: "bob", password: "p@ss" })).toEqual([
      "p@ss",
      "p%40ss",
      `Basic ${btoa("bob:p@ss")}`,
    ]);
    expect(credentialSecrets({ username: "tok_123", password: "" })[0]).toBe("tok_123");
    expect(credentialSecrets(undefined)).toEqual([]);
  });

  it("masks the password when showing the URL", () => {
    expect(describeWithCredentials("http://host/v1", credentials)).toBe("http://bob:***@host/v1");
    expect(describeWithCredentials("http://host/v1", { username: "tok", password: "" })).toBe(
      "http://***@host/v1",
    );
    expect(describeWithCredentials("http://host/v1", undefined)).toBe("http://host/v1");
  });
});
