/**
 * A Postgres URL as postgres-js takes it, with libpq's Unix-domain socket forms read: a `host`
 * query parameter that is an absolute path (`postgres://user@localhost/db?host=/var/run/postgresql`)
 * or a percent-encoded path as the host (`postgres://user@%2Fvar%2Frun%2Fpostgresql/db`) names the
 * socket's directory, and the socket is `<dir>/.s.PGSQL.<port>`. postgres-js reads neither form
 * (an empty or encoded host fails its URL parse, and it would send an unknown query parameter to
 * the server as a setting), so the socket goes to its `path` option and the URL loses the form.
 * Any other URL is returned as it is, without a path.
 */
export function socketUrl(url: string): { url: string; path: string | undefined } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url, path: undefined };
  }
  const param = parsed.searchParams.get("host");
  const encodedHost = parsed.hostname.toLowerCase().startsWith("%2f")
    ? decodeURIComponent(parsed.hostname)
    : null;
  const dir = param?.startsWith("/") ? param : encodedHost;
  if (!dir) return { url, path: undefined };
  parsed.searchParams.delete("host");
  parsed.hostname = "localhost";
  return { url: parsed.toString(), path: `${dir.replace(/\/+$/, "")}/.s.PGSQL.${parsed.port || "5432"}` };
}
