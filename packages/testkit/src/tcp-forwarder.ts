import { type AddressInfo, createServer, Socket } from "node:net";

/**
 * A TCP forwarder in front of a server (the test Postgres) that a test can cut, so an outage is
 * real (connections reset, new ones reset or left hanging, answers lost) while the server keeps
 * serving every other suite.
 */
export type TcpForwarder = {
  /** `target` with its host and port replaced by the forwarder's. */
  url: string;
  /**
   * "refuse": every connection reset, and new ones reset as soon as they arrive (the listener stays
   * open: closing it would free its port for any other suite's server to take before `restore`);
   * "stall": connections reset, new ones accepted and never answered.
   */
  cut: (mode: "refuse" | "stall") => Promise<void>;
  /**
   * What the client sends still reaches the server, what the server answers is dropped: a statement
   * runs (and commits) while its answer is lost, until `cut` or `restore`.
   */
  mute: () => void;
  /** Forwards again; connections cut or muted are reset (a client must reconnect). */
  restore: () => Promise<void>;
  close: () => Promise<void>;
};

export async function startTcpForwarder(target: URL): Promise<TcpForwarder> {
  const sockets = new Set<Socket>();
  let mode: "open" | "refuse" | "stall" | "mute" = "open";
  const server = createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => {});
    if (mode === "refuse") return void client.resetAndDestroy();
    if (mode === "stall") return; // accepted, never answered
    const db = new Socket();
    sockets.add(db);
    db.on("close", () => sockets.delete(db));
    db.on("error", () => client.destroy());
    client.on("error", () => db.destroy());
    db.connect(Number(target.port || 5432), target.hostname, () => {
      client.pipe(db);
      db.on("data", (chunk) => {
        if (mode !== "mute") client.write(chunk);
      });
    });
    client.on("close", () => db.destroy());
    db.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const dropAll = () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
  };
  const url = new URL(target.href);
  url.hostname = "127.0.0.1";
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.href,
    cut: async (m) => {
      mode = m;
      dropAll();
    },
    mute: () => {
      mode = "mute";
    },
    restore: async () => {
      dropAll();
      mode = "open";
    },
    close: async () => {
      dropAll();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
