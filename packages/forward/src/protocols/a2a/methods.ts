/**
 * The A2A JSON-RPC methods the gateway treats apart (docs/a2a.md): v1.0 names and their v0.3
 * spellings. Every other method is forwarded as it is, never retried, never repeated.
 */

/**
 * Reads: retried on a transient failure (connection error, 502/503/504 before an answer began)
 * and repeated after a worker crash. `SendMessage` and every write never are.
 */
export const A2A_READ_METHODS: ReadonlySet<string> = new Set([
  "GetTask",
  "ListTasks",
  "GetTaskPushNotificationConfig",
  "ListTaskPushNotificationConfigs",
  "GetExtendedAgentCard",
  // v0.3
  "tasks/get",
  "tasks/pushNotificationConfig/get",
  "tasks/pushNotificationConfig/list",
  "agent/getAuthenticatedExtendedCard",
]);

/** Methods that register a webhook the agent will call: its URL passes the SSRF guard first. */
export const A2A_PUSH_CONFIG_METHODS: ReadonlySet<string> = new Set([
  "CreateTaskPushNotificationConfig",
  "tasks/pushNotificationConfig/set",
]);

/** Methods whose params carry a message that may name a push notification config (v1.0 and v0.3). */
export const A2A_SEND_METHODS: ReadonlySet<string> = new Set([
  "SendMessage",
  "SendStreamingMessage",
  "message/send",
  "message/stream",
]);

export function isRetryableA2aMethod(method: string | null): boolean {
  return method !== null && A2A_READ_METHODS.has(method);
}
