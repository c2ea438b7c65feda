import { once } from "node:events";
import { createServer, type Server } from "node:http";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uploadOf } from "../src/upload.ts";

// What the forward step hands undici for a streamed request body: the whole body as one buffer
// when all of it has arrived (sent with the request head in one write), else its chunks as they come.
type Seen = { whole: boolean; text: string; completeThen: boolean; ended: boolean };

let server: Server;
let port = 0;
const seen: Seen[] = [];

beforeAll(async () => {
  server = createServer(async (req, res) => {
    // The proxy admits a call from caches: its first await returns in the same microtask drain.
    await null;
    const completeThen = req.complete;
    const body = uploadOf(req, null, null).stream();
    const whole = Buffer.isBuffer(body);
    let text = "";
    if (Buffer.isBuffer(body)) text = body.toString();
    else for await (const c of body) text += Buffer.from(c).toString();
    const ended = req.readableEnded || (await Promise.race([once(req, "end").then(() => true), sleep(2000)]));
    seen.push({ whole, text, completeThen, ended: ended === true });
    res.end(text);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as { port: number }).port;
});
afterAll(() => server.close());

const sleep = (ms: number) => new Promise<false>((r) => setTimeout(() => r(false), ms));

async function open(): Promise<Socket> {
  const sock = connect(port, "127.0.0.1");
  await once(sock, "connect");
  return sock;
}

/** Reads one whole response (Content-Length framed) off the socket. */
function response(sock: Socket): Promise<string> {
  return new Promise((resolve) => {
    let got = "";
    const onData = (d: Buffer) => {
      got += d.toString();
      const head = got.indexOf("\r\n\r\n");
      const len = /content-length: (\d+)/i.exec(got)?.[1];
      if (head >= 0 && len !== undefined && got.length >= head + 4 + Number(len)) {
        sock.off("data", onData);
        resolve(got.slice(head + 4));
      }
    };
    sock.on("data", onData);
  });
}

const head = (extra: string) => `POST /x HTTP/1.1\r\nhost: x\r\n${extra}\r\n`;

describe("uploadOf", () => {
  it("hands over a body that arrived with its head as one buffer, and the request still ends", async () => {
    seen.length = 0;
    const sock = await open();
    // Two calls on one keep-alive connection: the first one's end must be consumed for the next.
    for (const body of ['{"prompt":"hello","n":1}', "second"]) {
      sock.write(`${head(`content-length: ${body.length}\r\n`)}${body}`);
      expect(await response(sock)).toBe(body);
    }
    sock.destroy();
    expect(seen.map((s) => [s.whole, s.text, s.ended])).toEqual([
      [true, '{"prompt":"hello","n":1}', true],
      [true, "second", true],
    ]);
  });

  it("streams a body whose bytes have not all arrived, and a chunked one, as they come", async () => {
    seen.length = 0;
    const sock = await open();
    sock.write(`${head("content-length: 10\r\n")}hello`);
    await sleep(50);
    sock.write("world");
    expect(await response(sock)).toBe("helloworld");
    sock.write(`${head("transfer-encoding: chunked\r\n")}5\r\nhello\r\n0\r\n\r\n`);
    expect(await response(sock)).toBe("hello");
    sock.destroy();
    expect(seen.map((s) => [s.whole, s.text])).toEqual([
      [false, "helloworld"],
      // A chunked body is whole only once the request ended: then it goes as one buffer too.
      [seen[1]?.completeThen === true, "hello"],
    ]);
  });

  it("an empty body is one empty buffer", async () => {
    seen.length = 0;
    const sock = await open();
    sock.write(head("content-length: 0\r\n"));
    expect(await response(sock)).toBe("");
    sock.destroy();
    expect(seen.map((s) => [s.whole, s.text, s.ended])).toEqual([[true, "", true]]);
  });
});
