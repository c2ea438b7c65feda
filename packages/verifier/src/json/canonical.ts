// RFC 8785 canonical JSON has one home, @gw/core: the tool catalog digests tool definitions with it.
export { canonicalJson } from "@gw/core";
