import { deploy } from "./deploy.ts";
const d = await deploy({
  databaseUrl: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
  redisUrl: "redis://127.0.0.1:6379",
  ...(process.env.PROF ? { profileDir: process.env.PROF } : {}),
  paths: { echo: "/echo", sink: "/sink", source: "/source", sse: "/sse", transact: "/echo" },
});
console.log(JSON.stringify({ proxy: d.proxy, bare: d.bare, upstream: d.upstream, token: d.token, echo: d.agents.echo, transact: d.agents.transact, pid: d.proxyProc.pid ?? null }));
setInterval(() => {}, 1 << 30);
