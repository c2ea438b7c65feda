import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { AgentCard, Message } from "@a2a-js/sdk";
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryTaskStore,
  type RequestContext,
} from "@a2a-js/sdk/server";
import { agentCardHandler, jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import express from "express";

const text = (value: string) => ({
  content: { $case: "text" as const, value },
  metadata: undefined,
  filename: "",
  mediaType: "",
});

/** Echoes the text it is sent as a task: working, an artifact `echo: <text>`, completed. */
const executor: AgentExecutor = {
  async execute(ctx: RequestContext, bus: ExecutionEventBus) {
    const part = ctx.userMessage.parts.find((p) => p.content?.$case === "text");
    const said = part?.content?.$case === "text" ? part.content.value : "";
    const { taskId, contextId } = ctx;
    const status = (state: number) => ({
      state,
      message: undefined as Message | undefined,
      timestamp: undefined,
    });
    if (!ctx.task) {
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: status(1),
          artifacts: [],
          history: [ctx.userMessage],
          metadata: undefined,
        }),
      );
    }
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(2), metadata: undefined }));
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: "echo",
          name: "echo",
          description: "",
          parts: [text(`echo: ${said}`)],
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(3), metadata: undefined }));
    bus.finished();
  },
  async cancelTask(taskId: string, bus: ExecutionEventBus) {
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: "",
        status: { state: 5, message: undefined, timestamp: undefined },
        metadata: undefined,
      }),
    );
    bus.finished();
  },
};

/**
 * The demo's A2A agent: the official SDK's server (its JSON-RPC handler, v1.0 with the v0.3
 * compatibility layer, and its card at `/.well-known/agent-card.json`) on 127.0.0.1, a free port.
 */
export async function startA2aServer(): Promise<{ url: string; server: Server }> {
  const app = express();
  app.use(express.json());
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/a2a`;
  const card: AgentCard = {
    name: "demo-a2a",
    description: "Echoes what it is sent, as an A2A task.",
    version: "1.0.0",
    supportedInterfaces: [
      { url, protocolBinding: "JSONRPC", protocolVersion: "1.0", tenant: "" },
      { url, protocolBinding: "JSONRPC", protocolVersion: "0.3", tenant: "" },
    ],
    provider: undefined,
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [],
    signatures: [],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  app.use(
    "/.well-known/agent-card.json",
    agentCardHandler({ agentCardProvider: handler, legacyCompat: { enabled: true } }),
  );
  app.use(
    "/a2a",
    jsonRpcHandler({
      requestHandler: handler,
      userBuilder: UserBuilder.noAuthentication,
      legacyCompat: { enabled: true },
    }),
  );
  return { url, server };
}
