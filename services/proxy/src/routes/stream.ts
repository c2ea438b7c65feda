import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { LIMITS, newId } from "@gw/core";
import type { ErrorClass, InvocationUpdate } from "@gw/db";
import { type AppEnv, readNodeBodyCapped } from "@gw/http";
import { isRetryableMcpMethod, type McpMessage, parseMcpRequest } from "@gw/mcp";
import { proxyCalls, upstreamDuration } from "@gw/telemetry";
import {
  backoffMs,
  classifyFailure,
  downstreamResponseHeaders,
  isConnectionFailure,
  isRetryableStatus,
  upstreamRequestHeaders,
} from "@gw/upstream";
import { CredentialError, type InjectedHeader, openCredential } from "@gw/vault";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Hono } from "hono";
import type { Dispatcher } from "undici";
import { type Admitted, admit } from "../admission.ts";
import { Capture } from "../capture.ts";
import type { ProxyDeps } from "../deps.ts";

/**
 * POST /v1/proxy/{id}/stream: the upstream's status, headers and body streamed back verbatim with
 * backpressure (SSE event by event), the request body streamed up the same way. Nothing is
 * buffered but an MCP request (its JSON-RPC envelope must be read to record method and tool).
 */
export function registerStream(app: Hono<AppEnv>, deps: ProxyDeps) {
  app.post("/v1/proxy/:id/stream", async (c) => {
    const admitted = await admit(c, deps);
    const { incoming, outgoing } = c.env;
    let buffered: Buffer | null = null;
    let mcp: McpMessage | null = null;
    if (admitted.agent.protocol === "mcp") {
      // seam: verifier — with the verifier configured an MCP agent is refused here (409).
      buffered = await readNodeBodyCapped(incoming, LIMITS.transactMaxBodyBytes);
      mcp = parseMcpRequest(buffered);
    }
    // seam: policy, x402 — steps 6–7, then settlement before the upstream opens.
    const adm: Admitted = { ...admitted, mcpMethod: mcp?.method ?? null, mcpTool: mcp?.tool ?? null };
    const invocationId = newId("inv");
    await deps.invocations.insert(adm.tenantId, {
      id: invocationId,
      agentId: adm.agent.id,
      mode: "streaming",
      status: "running",
      model: adm.model,
      mcpMethod: adm.mcpMethod,
      mcpTool: adm.mcpTool,
      startedAt: new Date(),
    });
    await runStream(deps, adm, invocationId, c.var.requestId, incoming, outgoing, buffered, c.var.log);
    return RESPONSE_ALREADY_SENT;
  });
}

async function runStream(
  deps: ProxyDeps,
  adm: Admitted,
  invocationId: string,
  requestId: string,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  buffered: Buffer | null,
  log: ProxyDeps["logger"],
): Promise<void> {
  const { config } = deps;
  const t0 = performance.now();
  const capture = adm.agent.captureBodies;
  const reqCapture = capture ? new Capture(LIMITS.capturedBodyMaxBytes) : null;
  const respCapture = capture ? new Capture(LIMITS.capturedBodyMaxBytes) : null;
  let reqSize = buffered?.length ?? 0;
  let reqTouched = false;
  if (buffered) reqCapture?.add(buffered);

  const ac = new AbortController();
  let done = false;
  const finish = (
    set: Pick<InvocationUpdate, "status" | "errorClass" | "upstreamStatus">,
    ttftMs: number | null,
    respSize: number,
  ) => {
    if (done) return;
    done = true;
    const latencyMs = Math.round(performance.now() - t0);
    upstreamDuration.record(latencyMs, { mode: "streaming" });
    proxyCalls.add(1, { mode: "streaming", outcome: set.status ?? "unknown" });
    const update: InvocationUpdate = {
      ...set,
      latencyMs,
      ttftMs,
      reqSize,
      respSize,
      completedAt: new Date(),
    };
    if (reqCapture && respCapture) {
      update.bodyCaptured = true;
      update.reqBody = reqCapture.bytes();
      update.respBody = respCapture.bytes();
    }
    deps.inflight.track(
      deps.invocations.update(adm.tenantId, invocationId, update).catch((e: unknown) => {
        log.error(
          { invocation_id: invocationId, err: e instanceof Error ? e.message : "error" },
          "could not record stream outcome",
        );
      }),
    );
    log.info(
      {
        invocation_id: invocationId,
        status: set.status,
        error_class: set.errorClass,
        upstream_status: set.upstreamStatus,
        latency_ms: latencyMs,
      },
      "stream finished",
    );
  };

  // A client that goes away cancels the upstream call.
  outgoing.once("close", () => {
    if (!outgoing.writableFinished) {
      ac.abort();
      finish({ status: "failed", errorClass: "cancelled", upstreamStatus: null }, null, 0);
    }
  });

  const body = () => {
    if (buffered) return buffered;
    return (async function* () {
      reqTouched = true;
      for await (const chunk of incoming) {
        reqSize += (chunk as Buffer).length;
        reqCapture?.add(chunk as Buffer);
        yield chunk as Buffer;
      }
    })();
  };
  // The credential is opened just in time and lives only as long as this call.
  let credential: InjectedHeader | undefined;
  if (adm.agent.credentialRef) {
    try {
      credential = await openCredential({
        db: deps.store.db,
        keyring: deps.keyring,
        tenantId: adm.tenantId,
        credentialId: adm.agent.credentialRef,
      });
    } catch (e) {
      if (!(e instanceof CredentialError)) throw e;
      log.warn({ invocation_id: invocationId, reason: e.reason }, "credential could not be opened");
      failBeforeResponse(e);
      return;
    }
  }
  const headers = upstreamRequestHeaders(incoming.rawHeaders, {
    invocationId,
    agentId: adm.agent.id,
    tenantId: adm.tenantId,
    keepContentLength: true,
    credential,
  });
  const retrySafe = adm.agent.protocol === "http" || isRetryableMcpMethod(adm.mcpMethod);

  let res: Dispatcher.ResponseData;
  for (let attempt = 1; ; attempt++) {
    try {
      res = await deps.dispatcher.request({
        origin: adm.target.origin,
        path: adm.target.path,
        method: "POST",
        headers,
        // undici streams async iterables; its types list only Readable.
        body: body() as unknown as Buffer,
        signal: ac.signal,
        headersTimeout: config.GW_STREAM_FIRST_BYTE_TIMEOUT_MS,
        bodyTimeout: config.GW_STREAM_IDLE_TIMEOUT_MS,
      });
    } catch (e) {
      // Retry only while not a byte of the request has left (or it is held whole) and repeating is safe.
      const again =
        attempt <= config.GW_UPSTREAM_RETRIES &&
        retrySafe &&
        !reqTouched &&
        !ac.signal.aborted &&
        isConnectionFailure(e);
      if (again) {
        await sleep(backoffMs(attempt - 1, config.GW_RETRY_BASE_MS));
        continue;
      }
      failBeforeResponse(e);
      return;
    }
    const replayable = buffered !== null && retrySafe;
    if (
      replayable &&
      isRetryableStatus(res.statusCode) &&
      attempt <= config.GW_UPSTREAM_RETRIES &&
      !ac.signal.aborted
    ) {
      await res.body.dump().catch(() => {});
      await sleep(backoffMs(attempt - 1, config.GW_RETRY_BASE_MS));
      continue;
    }
    break;
  }

  const upstreamStatus = res.statusCode;
  const responseHeaders = downstreamResponseHeaders(res.headers);
  responseHeaders["x-gateway-invocation-id"] = invocationId;
  responseHeaders["x-request-id"] = requestId;
  outgoing.writeHead(upstreamStatus, responseHeaders);
  // A body of known length follows at once: its headers leave with its first bytes, in one write.
  // A stream (SSE, chunked) may wait long for its first event: its headers go now.
  if (res.headers["content-length"] === undefined) outgoing.flushHeaders();

  const outcome = (): Pick<InvocationUpdate, "status" | "errorClass" | "upstreamStatus"> =>
    upstreamStatus >= 500
      ? { status: "failed", errorClass: "upstream_5xx", upstreamStatus }
      : upstreamStatus >= 400
        ? { status: "failed", errorClass: "upstream_4xx", upstreamStatus }
        : { status: "succeeded", errorClass: null, upstreamStatus };

  let ttftMs: number | null = null;
  let respSize = 0;
  const up = res.body;
  up.on("data", (chunk: Buffer) => {
    if (ttftMs === null) ttftMs = Math.round(performance.now() - t0);
    respSize += chunk.length;
    respCapture?.add(chunk);
    if (!outgoing.write(chunk)) up.pause();
  });
  outgoing.on("drain", () => up.resume());
  up.once("end", () => {
    outgoing.end(() => finish(outcome(), ttftMs, respSize));
  });
  up.once("error", (e) => {
    if (done) return;
    // Headers are out: the only honest signal left to the client is an aborted response.
    outgoing.destroy();
    const failure = classifyFailure(e);
    const errorClass: ErrorClass = ac.signal.aborted
      ? "cancelled"
      : failure === "timeout"
        ? "timeout"
        : "upstream_5xx";
    finish({ status: "failed", errorClass, upstreamStatus }, ttftMs, respSize);
  });

  function failBeforeResponse(e: unknown) {
    const failure = e instanceof CredentialError ? "credential" : classifyFailure(e);
    if (ac.signal.aborted || outgoing.destroyed) {
      finish({ status: "failed", errorClass: "cancelled", upstreamStatus: null }, null, 0);
      return;
    }
    const [status, message, errorClass]: [number, string, ErrorClass] =
      failure === "timeout"
        ? [504, "upstream timed out", "timeout"]
        : failure === "ssrf_blocked"
          ? [502, "upstream address is not allowed", "ssrf_blocked"]
          : failure === "credential"
            ? [502, "the agent's upstream credential could not be used", "credential_error"]
            : failure === "internal"
              ? [502, "upstream call failed", "internal"]
              : [502, "upstream unreachable", "upstream_5xx"];
    const payload = JSON.stringify({ error: message });
    outgoing.writeHead(status, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(payload),
      "x-gateway-invocation-id": invocationId,
      "x-request-id": requestId,
    });
    outgoing.end(payload);
    finish({ status: "failed", errorClass, upstreamStatus: null }, null, 0);
    // The caller may still be sending: let Node drain the rest of the request.
    if (!incoming.complete) incoming.resume();
  }
}
