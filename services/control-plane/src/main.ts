import { boot } from "@gw/runtime";
import { createControlPlaneApp } from "./app.ts";

const { rt, serve } = await boot({ service: "control-plane", defaultPort: 8080 });
await serve(createControlPlaneApp(rt));
