import { isRecord, parseJson } from "@gw/jsonrpc";
import type { Settled } from "@gw/payments";
import type { Logger } from "@gw/telemetry";
import { redactSecret } from "@gw/vault";
import {
  type Json,
  type Member,
  mergedTaskList,
  namedTask,
  type OwnAnswer,
  REVISION,
  requestId,
  shapedFor,
  type TaskPlan,
  unknownTask,
  withGatewayTasks,
  withMemberTask,
} from "@gw/virtual";
import { answerReader } from "../answer/collect.ts";
import type { AnswerSink, ForwardCall } from "../call.ts";
import { openCallCredential } from "../credential.ts";
import type { ForwardDeps } from "../deps.ts";
import { dialCollect } from "../dial.ts";
import { type LearnedMcpTask, learnMcpTask } from "../protocols/mcp-task.ts";
import type { Tap } from "../tap.ts";
import { memberCall, type Route } from "../target.ts";
import { deliver, failed } from "./deliver.ts";
import { linkedBody, linkedCall, mcpNameOf } from "./member-adapt.ts";
import { knownLink, type Link, LinkError, linkOf } from "./member-link.ts";
import { memberPort } from "./member-port.ts";
import { memberIdsOf } from "./session-key.ts";

type Served = Extract<Route, { kind: "virtual" }>;

/** A member's answer, with the member session it was asked on ("" for none: the gateway id names it). */
type Asked =
  | { kind: "answer"; status: number; message: Json | null; session: string }
  | { kind: "failure"; reason: string };

/** The 2026-07-28 task methods whose `Mcp-Name` is the task id (the tasks extension). */
const NAMED_BY_TASK: ReadonlySet<string> = new Set(["tasks/get", "tasks/update", "tasks/cancel"]);

/**
 * An MCP task request of a virtual server (docs/mcp.md, Tasks; ADR 0045): a task-augmented
 * `tools/call` goes to the tool's member and the task it created comes back under a gateway id
 * naming that member, the member session it was created on and the member's task id; `tasks/*`
 * naming a gateway id go to that member on that session with the member's id, from whichever
 * replica; `tasks/list` merges the members' lists. An id this gateway did not issue for this tenant
 * and agent, a member no longer in the server, or a member session that is gone: invalid params.
 */
export async function servedTask(
  call: ForwardCall,
  route: Served,
  tap: Tap,
  settled: Settled,
  sink: AnswerSink,
  deps: ForwardDeps,
): Promise<void> {
  const plan = route.plan as TaskPlan;
  const { server } = route;
  const log = sink.caller.log;
  const id = requestId(plan.message);
  const ids = memberIdsOf(deps.config);
  const issuer = (member: Member, session: string) => (own: string) =>
    ids.issue({
      kind: "task",
      tenantId: call.tenantId,
      agentId: call.agentId,
      member: member.agentId,
      memberSession: session,
      id: own,
    });
  const own = (answer: OwnAnswer) =>
    deliver(call, tap, settled, sink, deps, {
      status: answer.status,
      body: encode(answer.message),
      reached: false,
    });
  const answered = (member: Member, status: number, message: Json) => {
    tap.routedAgentId = member.agentId;
    // The record learns the task (under the gateway's id) as a plain agent's call would.
    const learned: LearnedMcpTask = {};
    learnMcpTask(message.result, learned);
    tap.learner = { add: () => {}, facts: () => learned };
    const shaped = shapedFor(message, plan.client ?? REVISION);
    return deliver(call, tap, settled, sink, deps, { status, body: encode(shaped), reached: true });
  };

  if (plan.method === "tasks/list") {
    const replies = await Promise.all(
      server.members.map(async (m) => ({
        m,
        r: await ask(call, m, null, plan.message, plan.client, deps, log),
      })),
    );
    const port = memberPort(call, deps, log, plan.client);
    for (const { m, r } of replies) if (r.kind === "failure") port.failed(m, plan.method, r.reason);
    const pages = replies.flatMap(({ m, r }) =>
      r.kind === "answer" && r.message && isRecord(r.message.result)
        ? [{ result: r.message.result, issue: issuer(m, r.session) }]
        : [],
    );
    if (pages.length === 0 && replies.every(({ r }) => r.kind === "failure")) {
      return failed(call, tap, settled, sink, "unreachable");
    }
    return deliver(call, tap, settled, sink, deps, {
      status: 200,
      body: encode(shapedFor(mergedTaskList(id, pages).message, plan.client ?? REVISION)),
      reached: true,
    });
  }

  let member: Member;
  let session: string | null = null;
  let message = plan.message;
  if (plan.member) member = plan.member;
  else {
    const claims = ids.verify("task", namedTask(plan.message), call.tenantId, call.agentId);
    const found = claims ? server.members.find((m) => m.agentId === claims.member) : undefined;
    if (!claims || !found) return own(unknownTask(id));
    member = found;
    session = claims.memberSession;
    message = withMemberTask(plan.message, claims);
  }
  const reply = await ask(call, member, session, message, plan.client, deps, log);
  if (reply.kind === "failure") {
    memberPort(call, deps, log, plan.client).failed(member, plan.method, reply.reason);
    return failed(call, tap, settled, sink, reply.reason === "timeout" ? "timeout" : "unreachable");
  }
  // The member session the task lives in is gone (404), and its tasks with it.
  if (session !== null && reply.status === 404) return own(unknownTask(id));
  if (!reply.message) return failed(call, tap, settled, sink, "unreachable");
  return answered(member, reply.status, withGatewayTasks(reply.message, issuer(member, reply.session)));
}

function encode(message: Json): Buffer {
  return Buffer.from(JSON.stringify(message));
}

/**
 * One task request to a member, in its revision: on its session as this process knows it, or on
 * `session` (the one a gateway task id names) when given; read whole, the credential redacted.
 * A request on this process's own session that the member answers 404 (the session expired) is
 * sent once more on a new one, as any member call is; a named session is never replaced (its tasks
 * are gone with it).
 */
async function ask(
  call: ForwardCall,
  member: Member,
  session: string | null,
  message: Json,
  client: string | null,
  deps: ForwardDeps,
  log: Logger,
): Promise<Asked> {
  let link: Link;
  try {
    link = knownLink(member, call) ?? (await linkOf(member, call, deps, log));
  } catch (e) {
    if (e instanceof LinkError) return { kind: "failure", reason: e.reason };
    throw e;
  }
  if (session !== null && link.kind === "session")
    link = { ...link, sessionId: session === "" ? null : session };
  const first = await askOn(call, member, link, message, client, deps, log);
  if (session !== null || link.kind !== "session" || first.kind !== "answer" || first.status !== 404)
    return first;
  try {
    link = await linkOf(member, call, deps, log, link);
  } catch (e) {
    if (e instanceof LinkError) return { kind: "failure", reason: e.reason };
    throw e;
  }
  return askOn(call, member, link, message, client, deps, log);
}

async function askOn(
  call: ForwardCall,
  member: Member,
  link: Link,
  message: Json,
  client: string | null,
  deps: ForwardDeps,
  log: Logger,
): Promise<Asked> {
  const method = typeof message.method === "string" ? message.method : "";
  const body = Buffer.from(JSON.stringify(message));
  const taskId = namedTask(message);
  // 2026-07-28's Mcp-Name: the member's own task id, or the tool's own name.
  const name = NAMED_BY_TASK.has(method)
    ? typeof taskId === "string"
      ? taskId
      : null
    : mcpNameOf(body, method);
  const mcall = linkedCall(
    memberCall(call, member, null, method),
    link,
    method,
    link.kind === "stateless" ? name : null,
  );
  const credential = await openCallCredential(mcall, member.target.host, deps, { log });
  if (credential === "refused") return { kind: "failure", reason: "credential" };
  const sent = linkedBody(body, link, client);
  const result = await dialCollect(mcall, member.target, credential, sent, answerReader(mcall), deps);
  if (result.kind === "failure") return { kind: "failure", reason: result.failure };
  if (!result.body.ok) return { kind: "failure", reason: result.body.failure };
  const bytes = redactSecret(result.body.body, credential?.secret ?? "");
  const parsed = bytes.length === 0 ? null : parseJson(Buffer.from(bytes).toString("utf8"));
  return {
    kind: "answer",
    status: result.status,
    message: isRecord(parsed) && parsed.jsonrpc === "2.0" ? parsed : null,
    session: link.kind === "session" ? (link.sessionId ?? "") : "",
  };
}
