import { createServer, type Server, Socket } from "node:net";

/**
 * A TCP forwarder in front of a server (the test Postgres) that a test can cut, so an outage is
 * real (connections reset, new ones refused or left hanging, answers lost) while the server keeps
 * serving every other suite.
 */
export type TcpForwarder = {
  /** `target` with its host and port replaced by the forwarder's. */
  url: string;
  /**
   * "refuse": every connection reset and new ones refused; "stall": connections reset, new ones
   * accepted and never answered.
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
  let mode: "open" | "stall" | "mute" = "open";
  let server: Server;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        sockets.add(client);
        client.on("close", () => sockets.delete(client));
        client.on("error", () => {});
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
      server.listen(port, "127.0.0.1", () => {
        const a = server.address();
        if (a && typeof a === "object") port = a.port;
        resolve();
      });
    });
  const dropAll = () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
  };
  await listen();
  const url = new URL(target.href);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  let listening = true;
  return {
    url: url.href,
    cut: async (m) => {
      dropAll();
      if (m === "stall") {
        mode = "stall";
        return;
      }
      mode = "open";
      if (listening) {
        listening = false;
        await new Promise<void>((r) => server.close(() => r()));
      }
    },
    mute: () => {
      mode = "mute";
    },
    restore: async () => {
      dropAll();
      mode = "open";
      if (!listening) {
        await listen();
        listening = true;
      }
    },
    close: async () => {
      dropAll();
      if (listening) {
        listening = false;
        await new Promise<void>((r) => server.close(() => r()));
      }
    },
  };
}
