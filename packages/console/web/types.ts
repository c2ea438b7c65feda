// Shapes of the API resources the console reads: the component schemas of the OpenAPI document,
// generated into @gw/client from the same valibot schemas the server validates and answers with.
// Nothing here is written by hand, so a server change the console does not follow fails typecheck.
import type { paths, Schema } from "@gw/client";

export type List<T> = { data: T[]; limit: number; offset: number; total: number };
export type ApiErrorBody = Schema<"Error">;

export type Me = Schema<"Me">;
export type Capabilities = Schema<"Capabilities">;
export type Surfaces = Capabilities["surfaces"];
export type Agent = Schema<"Agent">;
export type Price = Schema<"AgentPrice">;
export type RateLimit = Schema<"AgentRateLimit">;
export type CreateAgentBody = Schema<"CreateAgent">;
export type PatchAgentBody = Schema<"PatchAgent">;
export type Credential = Schema<"Credential">;
export type CreateCredentialBody = Schema<"CreateCredential">;
export type PutCredentialBody = Schema<"PutCredential">;
export type Connection = Schema<"Connection">;
export type Settlement = Schema<"Settlement">;
export type Invocation = Schema<"Invocation">;
export type InvocationDetail = Schema<"InvocationDetail">;
export type PollResult = Schema<"PollResult">;
export type Receipt = Schema<"Receipt">;
export type PolicyDocument = Schema<"Policy">;
export type PolicyBody = NonNullable<
  paths["/v1/policy"]["put"]["requestBody"]
>["content"]["application/json"];
export type PolicyDecision = Schema<"PolicyDecision">;
export type PolicyQuotaUse = Schema<"PolicyQuotaUse">;
export type Approval = Schema<"Approval">;
export type AuditEvent = Schema<"AuditEvent">;
export type AuditVerify = Schema<"AuditVerify">;
export type SettlementConfig = Schema<"SettlementConfig">;
export type PutSettlementConfigBody = Schema<"PutSettlementConfig">;
export type AnalyticsRow = Schema<"Analytics">["data"][number];
export type Tool = Schema<"Tool">;
export type ToolDetail = Schema<"ToolDetail">;
