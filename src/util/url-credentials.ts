/**
 * `user:password@` in a base URL or an MCP server's URL. eddy takes it out of the URL before anything uses the URL, so
 * the password can reach neither error messages (which quote URLs) nor frames and tapes, and sends
 * it the way browsers and curl do: as `Authorization: Basic …` (RFC 7617). Node's `fetch` refuses
 * URLs with credentials outright, so leaving them in was never an option.
 */

/** The decoded user name and password of a URL's userinfo. */
export interface UrlCredentials {
  username: string;
  password: string;
}

// scheme "://" userinfo "@": matched on the text, so an unparsable URL loses its password too.
const USERINFO = /^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)([^/?#]*)@/;

/** `url` without its userinfo, and the credentials that were in it (undefined when none). */
export function splitUrlCredentials(url: string): { url: string; credentials: UrlCredentials | undefined } {
  const match = USERINFO.exec(url);
  if (match === null) return { url, credentials: undefined };
  const [whole, scheme = "", userinfo = ""] = match;
  const colon = userinfo.indexOf(":");
  const credentials = {
    username: decode(colon < 0 ? userinfo : userinfo.slice(0, colon)),
    password: decode(colon < 0 ? "" : userinfo.slice(colon + 1)),
  };
  return { url: scheme + url.slice(whole.length), credentials };
}

/** The `Authorization` header value for URL credentials. */
export function basicAuthorization(credentials: UrlCredentials): string {
  return `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`, "utf8").toString("base64")}`;
}

/**
 * The strings that must never be shown or recorded for these credentials: the password (or, for
 * `token@host`, the lone user name, which is then the secret), raw and URL-encoded, and the header.
 */
export function credentialSecrets(credentials: UrlCredentials | undefined): string[] {
  if (credentials === undefined) return [];
  const secret = credentials.password !== "" ? credentials.password : credentials.username;
  return [secret, encodeURIComponent(secret), basicAuthorization(credentials)];
}

/** `http://host/v1` shown with its credentials masked: `http://user:***@host/v1`. */
export function describeWithCredentials(url: string, credentials: UrlCredentials | undefined): string {
  const match = /^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)/.exec(url);
  if (credentials === undefined || match === null) return url;
  const scheme = match[1] ?? "";
  const user = credentials.password === "" ? "" : `${encodeURIComponent(credentials.username)}:`;
  return `${scheme}${user}***@${url.slice(scheme.length)}`;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
