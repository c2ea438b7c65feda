import { JwksResource, ReceiptResource } from "@gw/receipts";
import type * as v from "valibot";
import { error, ok } from "../common.ts";
import type { Route } from "../route.ts";

const tags = ["Receipts"];

export const receiptsRoutes: Route[] = [
  {
    method: "get",
    path: "/v1/invocations/{id}/receipt",
    operationId: "getInvocationReceipt",
    summary: "The signed receipt of an invocation",
    description: "attested false with a reason when there is none (emission is fail-open).",
    tags,
    responses: {
      "200": ok("The receipt reference.", ReceiptResource),
      "404": error("No invocation with this id in the caller's tenant."),
    },
  },
  {
    method: "get",
    path: "/v1/receipts/jwks",
    operationId: "getReceiptsJwks",
    summary: "Public keys receipts are signed with",
    description:
      "kid is the RFC 7638 thumbprint each receipt's JWS header names; no keys when receipts are off.",
    tags,
    public: true,
    responses: { "200": ok("A JWK set.", JwksResource) },
  },
];

export const receiptsComponents = { Receipt: ReceiptResource, Jwks: JwksResource } satisfies Record<
  string,
  v.GenericSchema
>;
