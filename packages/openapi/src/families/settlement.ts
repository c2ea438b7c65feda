import { LIMITS } from "@gw/core";
import { PutSettlementConfig, SettlementConfigResource } from "@gw/payments";
import type * as v from "valibot";
import { bodyTooLarge, error, ok } from "../common.ts";
import type { Route } from "../route.ts";

const tags = ["Settlement"];

export const settlementRoutes: Route[] = [
  {
    method: "get",
    path: "/v1/settlement/config",
    operationId: "getSettlementConfig",
    summary: "The tenant's settlement configuration",
    tags,
    responses: {
      "200": ok("The facilitator of this tenant.", SettlementConfigResource),
      "404": error("The tenant has no settlement configuration."),
    },
  },
  {
    method: "put",
    path: "/v1/settlement/config",
    operationId: "putSettlementConfig",
    summary: "Configure the tenant's facilitator",
    description:
      "The facilitator URL passes the same SSRF guard as upstreams; the credential is injected into facilitator calls.",
    tags,
    body: { json: PutSettlementConfig, required: true },
    responses: {
      "200": ok("The configuration.", SettlementConfigResource),
      "400": error(
        "Invalid body: unknown field, a facilitator_url failing SSRF validation, or a credential that does not exist.",
      ),
      "413": bodyTooLarge(LIMITS.jsonBodyMaxBytes),
    },
  },
];

export const settlementComponents = {
  SettlementConfig: SettlementConfigResource,
  PutSettlementConfig,
} satisfies Record<string, v.GenericSchema>;
