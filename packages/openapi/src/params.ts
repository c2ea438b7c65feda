import * as v from "valibot";
import { idSchema } from "./common.ts";

/** Path parameters and the id pattern each accepts (docs/interface.md, Conventions: prefix + UUIDv7). */
export const PATH_PARAMS: Record<string, { description: string; schema: v.GenericSchema }> = {
  agent: { description: "Agent id.", schema: idSchema("agt") },
  credential: { description: "Credential id.", schema: idSchema("cred") },
  credential_id: {
    description: "Id of a per-user credential (kind oauth2_authorization_code).",
    schema: idSchema("cred"),
  },
  invocation: { description: "Invocation id.", schema: idSchema("inv") },
  inv_id: { description: "Invocation id.", schema: idSchema("inv") },
  approval: { description: "Approval id.", schema: idSchema("apr") },
  name: { description: "The tool's name as the MCP server lists it.", schema: v.string() },
};
