// `node --import ./globsync-stub.mjs <conformance>`: registers globsync-hooks.mjs (Node 20 lacks fs.globSync).
import { register } from "node:module";

register("./globsync-hooks.mjs", import.meta.url);
