import { logs, SeverityNumber } from "@opentelemetry/api-logs";

/** A flat audit event as the control plane emits it: scalar fields and `changes` as JSON. */
export type AuditRecordAttributes = Record<string, string | null>;

/**
 * Emits one audit event as an OpenTelemetry log record (`gw.audit` logger, body `audit`, the
 * event's fields as attributes). A no-op when no OTLP endpoint is configured: the global logger
 * provider is then the API's no-op one. The caller passes fields that hold no secret (`changes`
 * names secret fields only).
 */
export function emitAuditRecord(attributes: AuditRecordAttributes): void {
  const attrs: Record<string, string> = {};
  for (const [k, v] of Object.entries(attributes)) if (v !== null) attrs[k] = v;
  logs.getLogger("gw.audit").emit({
    severityNumber: SeverityNumber.INFO,
    severityText: "INFO",
    body: "audit",
    attributes: attrs,
  });
}
