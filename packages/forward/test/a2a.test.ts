import { describe, expect, it } from "vitest";
import { a2aLearner } from "../src/protocols/a2a/answer.ts";
import { rewriteAgentCard, signedCardContent } from "../src/protocols/a2a/card.ts";
import { isRetryableA2aMethod } from "../src/protocols/a2a/methods.ts";
import { parseA2aRequest } from "../src/protocols/a2a/request.ts";

const body = (v: unknown) => Buffer.from(JSON.stringify(v));
const request = (method: string, params: unknown) => body({ jsonrpc: "2.0", id: 7, method, params });

describe("the A2A request", () => {
  it("names the task from params.taskId, then the message's, then params.id", () => {
    expect(parseA2aRequest(request("GetTaskPushNotificationConfig", { taskId: "t", id: "cfg" })).taskId).toBe(
      "t",
    );
    expect(
      parseA2aRequest(request("SendMessage", { message: { taskId: "m", contextId: "c" } })),
    ).toMatchObject({
      taskId: "m",
      contextId: "c",
      method: "SendMessage",
      id: 7,
    });
    expect(parseA2aRequest(request("GetTask", { id: "g" })).taskId).toBe("g");
    expect(parseA2aRequest(request("ListTasks", {})).taskId).toBeNull();
  });

  it("records no id the store could not hold (NUL, over 256 bytes, not a string)", () => {
    expect(parseA2aRequest(request("GetTask", { id: "a\u0000b" })).taskId).toBeNull();
    expect(parseA2aRequest(request("GetTask", { id: "x".repeat(257) })).taskId).toBeNull();
    expect(parseA2aRequest(request("GetTask", { id: 12 })).taskId).toBeNull();
  });

  it("collects push webhook URLs of configs and of send configurations, in both versions", () => {
    expect(
      parseA2aRequest(request("CreateTaskPushNotificationConfig", { url: "https://a" })).pushUrls,
    ).toEqual(["https://a"]);
    const old = { pushNotificationConfig: { url: "https://b" } };
    expect(parseA2aRequest(request("tasks/pushNotificationConfig/set", old)).pushUrls).toEqual(["https://b"]);
    const send = { message: {}, configuration: { pushNotificationConfig: { url: "https://c" } } };
    expect(parseA2aRequest(request("message/send", send)).pushUrls).toEqual(["https://c"]);
    expect(parseA2aRequest(request("GetTask", { url: "https://d" })).pushUrls).toEqual([]);
  });

  it("refuses what is not one JSON-RPC request", () => {
    expect(() => parseA2aRequest(Buffer.from("[]"))).toThrow(/batches/);
    expect(() => parseA2aRequest(Buffer.from([0xff]))).toThrow(/valid JSON/);
    expect(() => parseA2aRequest(body({ jsonrpc: "2.0", method: "SendMessage" }))).toThrow(/with an id/);
    expect(() => parseA2aRequest(body({ jsonrpc: "2.0", id: 1, result: {} }))).toThrow(/with an id/);
  });

  it("retries the reads only", () => {
    expect(["GetTask", "tasks/get", "ListTasks"].every(isRetryableA2aMethod)).toBe(true);
    expect(["SendMessage", "message/send", "CancelTask", null].some(isRetryableA2aMethod)).toBe(false);
  });
});

describe("learning from the answer", () => {
  const sse = { status: 200, headers: { "content-type": "text/event-stream" } };
  const event = (result: unknown) => `data: ${JSON.stringify({ jsonrpc: "2.0", id: 1, result })}\n\n`;

  it("reads SSE events split anywhere across chunks, the last state winning", () => {
    const text =
      event({ kind: "task", id: "t", contextId: "c", status: { state: "submitted" } }) +
      event({ kind: "status-update", taskId: "other", status: { state: "working" } }) +
      event({ kind: "status-update", taskId: "t", status: { state: "completed" }, final: true });
    const learner = a2aLearner(sse) as NonNullable<ReturnType<typeof a2aLearner>>;
    for (let i = 0; i < text.length; i += 7) learner.add(Buffer.from(text.slice(i, i + 7)));
    expect(learner.facts()).toEqual({ a2aTaskId: "t", a2aContextId: "c", a2aTaskState: "completed" });
  });

  it("once task and context are known, still finds a state however its key is written", () => {
    const text =
      event({ task: { id: "t", contextId: "c", status: { state: "TASK_STATE_SUBMITTED" } } }) +
      event({ artifactUpdate: { taskId: "t", artifact: { parts: [{ text: "no status here" }] } } }) +
      // "state" spelt with an escape in the key: JSON reads it as "state", so it is learned.
      'data: {"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{"taskId":"t","status":{"st\\u0061te":"TASK_STATE_WORKING"}}}}\n\n' +
      event({ artifactUpdate: { taskId: "t", artifact: { parts: [{ text: 'a "state" in a text' }] } } });
    const learner = a2aLearner(sse) as NonNullable<ReturnType<typeof a2aLearner>>;
    learner.add(Buffer.from(text));
    expect(learner.facts()).toEqual({
      a2aTaskId: "t",
      a2aContextId: "c",
      a2aTaskState: "TASK_STATE_WORKING",
    });
  });

  it("reads CRLF-framed events (as Python servers write them) in any chunks", () => {
    const crlf = (result: unknown) => event(result).replace(/\n/g, "\r\n");
    const text =
      crlf({ task: { id: "t", contextId: "c", status: { state: "TASK_STATE_SUBMITTED" } } }) +
      crlf({ artifactUpdate: { taskId: "t", artifact: { parts: [{ text: "x".repeat(50) }] } } }) +
      crlf({ statusUpdate: { taskId: "t", status: { state: "TASK_STATE_COMPLETED" } } }) +
      crlf({ artifactUpdate: { taskId: "t", artifact: { parts: [{ text: "late" }] } } });
    for (const size of [1, 5, 64, text.length]) {
      const learner = a2aLearner(sse) as NonNullable<ReturnType<typeof a2aLearner>>;
      for (let i = 0; i < text.length; i += size) learner.add(Buffer.from(text.slice(i, i + size)));
      expect(learner.facts()).toEqual({
        a2aTaskId: "t",
        a2aContextId: "c",
        a2aTaskState: "TASK_STATE_COMPLETED",
      });
    }
  });

  it("parses only the last status that carries a state, past any number kept", () => {
    const status = (state: string) => event({ statusUpdate: { taskId: "t", status: { state } } });
    const noState = event({ artifactUpdate: { taskId: "t", artifact: { parts: [{ text: '"state"' }] } } });
    let text = event({ task: { id: "t", contextId: "c", status: { state: "s-first" } } });
    for (let i = 0; i < 20; i++) text += status(`s${i}`) + noState;
    for (const last of [text, text + noState.repeat(9)]) {
      const learner = a2aLearner(sse) as NonNullable<ReturnType<typeof a2aLearner>>;
      learner.add(Buffer.from(last));
      expect(learner.facts()).toEqual({ a2aTaskId: "t", a2aContextId: "c", a2aTaskState: "s19" });
    }
  });

  it("learns nothing from an event the stream cut off", () => {
    const learner = a2aLearner(sse) as NonNullable<ReturnType<typeof a2aLearner>>;
    learner.add(Buffer.from(event({ task: { id: "t", status: { state: "TASK_STATE_WORKING" } } })));
    learner.add(
      Buffer.from('data: {"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{"status":{"state":"TASK_ST'),
    );
    expect(learner.facts()).toEqual({ a2aTaskId: "t", a2aTaskState: "TASK_STATE_WORKING" });
  });

  it("reads a JSON answer once, and nothing from errors or other statuses", () => {
    const json = { status: 200, headers: { "content-type": "application/json" } };
    const learner = a2aLearner(json) as NonNullable<ReturnType<typeof a2aLearner>>;
    learner.add(body({ jsonrpc: "2.0", id: 1, result: { id: "t", contextId: "c", status: { state: "s" } } }));
    expect(learner.facts()).toEqual({ a2aTaskId: "t", a2aContextId: "c", a2aTaskState: "s" });
    const error = a2aLearner(json) as NonNullable<ReturnType<typeof a2aLearner>>;
    error.add(body({ jsonrpc: "2.0", id: 1, error: { code: -32001, message: "no task" } }));
    expect(error.facts()).toEqual({});
    expect(a2aLearner({ status: 500, headers: {} })).toBeNull();
  });

  it("keeps nothing the store could not hold", () => {
    const learner = a2aLearner({ status: 200, headers: {} }) as NonNullable<ReturnType<typeof a2aLearner>>;
    learner.add(
      body({
        jsonrpc: "2.0",
        id: 1,
        result: { task: { id: "a\u0000", status: { state: "x".repeat(300) } } },
      }),
    );
    expect(learner.facts()).toEqual({});
  });
});

describe("the card rewrite", () => {
  const auth = { url: "https://gw.example/v1/proxy/agt_1/stream", authorizationServers: [] };

  it("gives a v1.0 card one JSON-RPC interface at the gateway and bearer security", () => {
    const card = rewriteAgentCard(
      {
        name: "n",
        supportedInterfaces: [
          { url: "https://up/rest", protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
          { url: "https://up/rpc", protocolBinding: "JSONRPC", protocolVersion: "1.0", tenant: "t1" },
        ],
        signatures: [{ protected: "x", signature: "y" }],
        skills: [{ id: "s" }],
      },
      auth,
    );
    expect(card).toEqual({
      name: "n",
      supportedInterfaces: [
        { url: auth.url, protocolBinding: "JSONRPC", protocolVersion: "1.0", tenant: "t1" },
      ],
      skills: [{ id: "s" }],
      securitySchemes: { gateway: { httpAuthSecurityScheme: expect.objectContaining({ scheme: "Bearer" }) } },
      securityRequirements: [{ schemes: { gateway: { list: [] } } }],
    });
  });

  it("gives a v0.3 card url and preferredTransport, and OAuth when configured", () => {
    const card = rewriteAgentCard(
      {
        name: "n",
        url: "https://up/rpc",
        protocolVersion: "0.3.0",
        additionalInterfaces: [{ url: "https://x" }],
      },
      { ...auth, authorizationServers: ["https://as.example/"] },
    );
    expect(card).toMatchObject({ url: auth.url, preferredTransport: "JSONRPC", security: [{ gateway: [] }] });
    expect(card?.additionalInterfaces).toBeUndefined();
    expect(card?.securitySchemes).toEqual({
      gateway: expect.objectContaining({
        type: "oauth2",
        oauth2MetadataUrl: "https://as.example/.well-known/oauth-authorization-server",
      }),
    });
  });

  it("refuses what is not a card, and signs the card without signatures and empty values", () => {
    expect(rewriteAgentCard([1], auth)).toBeNull();
    expect(rewriteAgentCard("card", auth)).toBeNull();
    expect(
      signedCardContent({ name: "n", description: "", skills: [], signatures: [{}], x: { y: null } }),
    ).toEqual({
      name: "n",
    });
  });
});
