// biome-ignore lint/suspicious/noExplicitAny: tests read response JSON freely.
export type Res = { status: number; headers: Headers; text: string; json: any };

/** A tiny HTTP client over real sockets; `json` is parsed when the body is JSON. */
export function client(baseUrl: string, bearer?: string) {
  return async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Res> => {
    const h: Record<string, string> = { ...headers };
    if (bearer && !("authorization" in h)) h.authorization = `Bearer ${bearer}`;
    let payload: RequestInit["body"] | undefined;
    if (typeof body === "string" || body instanceof Uint8Array) payload = body as RequestInit["body"];
    else if (body !== undefined) {
      payload = JSON.stringify(body);
      h["content-type"] ??= "application/json";
    }
    const res = await fetch(`${baseUrl}${path}`, { method, headers: h, body: payload ?? null });
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  };
}
