import { randomBytes } from "node:crypto";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { fetchUniqueId, serveUniqueId } from "../src/rendezvous.js";
import {
  HELLO_BYTES,
  hello,
  MAGIC,
  nonce,
  REQUEST_BYTES,
  refusal,
  replyBytes,
  STATUS,
} from "../src/rendezvousWire.js";

const secret = new TextEncoder().encode("SWITCHYARD_JOB_SECRET=test-job");
const id = Uint8Array.from({ length: 128 }, (_, i) => (i * 7) & 0xff);
const opened: Server[] = [];

afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});

function serve(worldSize: number, timeoutMs = 5000, port = 0) {
  return serveUniqueId({ host: "127.0.0.1", port, uniqueId: id, worldSize, secret, timeoutMs });
}

function fetch(port: number, rank: number, worldSize: number, extra: Record<string, unknown> = {}) {
  return fetchUniqueId({
    host: "127.0.0.1",
    port,
    bytes: 128,
    rank,
    worldSize,
    secret,
    timeoutMs: 5000,
    ...extra,
  });
}

/** A TCP server of the test's own (a stand-in for a hostile or broken peer of rank 0). */
async function rawServer(onSocket: (s: Socket, index: number) => void): Promise<number> {
  let n = 0;
  const server = createServer((s) => {
    s.on("error", () => {});
    onSocket(s, n++);
  });
  opened.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return (server.address() as { port: number }).port;
}

/** Connects, optionally writes `send` after the greeting, and returns every byte received until close. */
function rawClient(port: number, send?: Buffer): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const s = createConnection({ host: "127.0.0.1", port });
    s.on("data", (d) => {
      chunks.push(d);
      if (send && Buffer.concat(chunks).length >= HELLO_BYTES) {
        s.write(send);
        send = undefined;
      }
    });
    s.on("error", () => {});
    s.on("close", () => resolve(Buffer.concat(chunks)));
  });
}

function contains(haystack: Buffer, needle: Uint8Array): boolean {
  return haystack.indexOf(Buffer.from(needle)) >= 0;
}

describe("unique-id rendezvous over loopback", () => {
  it("rank 0 serves the id to every rank of its job, then closes", async () => {
    const server = await serve(4);
    expect(server.address).toBe("127.0.0.1"); // the configured address only, not every interface
    const got = await Promise.all([1, 2, 3].map((r) => fetch(server.port, r, 4)));
    for (const g of got) expect(g).toEqual(id);
    await server.done;
  });

  it("a peer retries until rank 0 listens", async () => {
    const probe = await serve(1);
    await probe.done;
    const fetching = fetch(probe.port, 1, 2, { retryMs: 50 });
    await new Promise((r) => setTimeout(r, 300));
    const server = await serve(2, 5000, probe.port);
    expect(await fetching).toEqual(id);
    await server.done;
  });

  it("times out with the address instead of hanging", async () => {
    const probe = await serve(1);
    await probe.done;
    await expect(fetch(probe.port, 1, 2, { timeoutMs: 300, retryMs: 50 })).rejects.toThrow(
      new RegExp(`127.0.0.1:${probe.port}\\): no unique id within 300 ms`),
    );
  });

  it("rank 0 gives up on ranks that never come, naming them", async () => {
    const server = await serve(3, 200);
    await expect(server.done).rejects.toThrow(/rank\(s\) 1, 2 \(2 of 2\) did not fetch/);
  });

  it("a stranger without the job secret gets nothing", async () => {
    const server = await serve(2);
    const forgedRequest = Buffer.concat([MAGIC.request, randomBytes(REQUEST_BYTES - 4)]);
    const stranger = await rawClient(server.port, forgedRequest);
    expect(contains(stranger, id)).toBe(false);
    expect(stranger.length).toBeLessThanOrEqual(HELLO_BYTES + 5);
    await expect(
      fetch(server.port, 1, 2, { secret: new TextEncoder().encode("another job"), timeoutMs: 400 }),
    ).rejects.toThrow(/job secret differs/);
    // The real rank still gets it: the stranger used no slot.
    expect(await fetch(server.port, 1, 2)).toEqual(id);
    await server.done;
  });

  it("names rank 0's refusal even when the last attempt only runs out of time", async () => {
    // Refuses the first request (the job secret differs), then greets no one: the retries time out.
    const port = await rawServer((s, i) => {
      if (i > 0) return;
      s.write(hello(nonce()));
      s.once("data", () => s.end(refusal(STATUS.badMac)));
    });
    await expect(fetch(port, 1, 2, { timeoutMs: 600, attemptMs: 150, retryMs: 20 })).rejects.toThrow(
      /last: no answer within \d+ ms \(one attempt\); rank 0's last answer: .*job secret differs/,
    );
  });

  it("a port-scan connect uses up no rank's slot", async () => {
    const server = await serve(2);
    for (const wait of ["connect", "data"] as const) {
      // A scanner that connects and leaves, and one that reads the greeting and leaves.
      const scan = createConnection({ host: "127.0.0.1", port: server.port });
      scan.on("error", () => {});
      await new Promise((r) => scan.once(wait, r));
      scan.destroy();
    }
    expect(await fetch(server.port, 1, 2)).toEqual(id);
    await server.done;
  });

  it("one rank fetching twice fills one slot: rank 0 still waits for the other", async () => {
    const server = await serve(3);
    await fetch(server.port, 1, 3);
    await fetch(server.port, 1, 3);
    let settled = false;
    server.done.then(() => {
      settled = true;
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(settled).toBe(false);
    await fetch(server.port, 2, 3);
    await server.done;
  });

  it("a rank of another world size or out of range is refused", async () => {
    const server = await serve(2);
    await expect(fetch(server.port, 1, 3, { timeoutMs: 300 })).rejects.toThrow(/world of another size/);
    await expect(fetch(server.port, 2, 2, { timeoutMs: 300 })).rejects.toThrow(/refused the rank/);
    server.close();
  });

  it("a forged server's id is refused at once", async () => {
    const port = await rawServer((s) => {
      s.write(Buffer.concat([MAGIC.hello, randomBytes(16)]));
      s.once("data", () =>
        s.write(Buffer.concat([MAGIC.reply, Buffer.of(0), randomBytes(replyBytes(128) - 5)])),
      );
    });
    // Refused at the first reply (the message), not after the whole budget ("no unique id within").
    await expect(fetch(port, 1, 2, { timeoutMs: 30_000 })).rejects.toThrow(
      /does not verify under the job secret/,
    );
  });

  it("an oversized reply is refused without reading it all", async () => {
    let sent = 0;
    const port = await rawServer((s) => {
      s.write(Buffer.concat([MAGIC.hello, randomBytes(16)]));
      s.once("data", () => {
        const chunk = Buffer.alloc(1 << 20, 1);
        const pump = () => {
          while (sent < 2 ** 31 && !s.destroyed && s.write(chunk)) sent += chunk.length;
          if (!s.destroyed && sent < 2 ** 31) s.once("drain", pump);
        };
        s.write(Buffer.concat([MAGIC.reply, Buffer.of(0)]));
        pump();
      });
    });
    await expect(fetch(port, 1, 2)).rejects.toThrow(/longer than the protocol's/);
    expect(sent).toBeLessThan(2 ** 31);
  });

  it("a silent server costs one attempt, not the whole budget", async () => {
    const real = await serve(2);
    // The first connection gets silence; later ones reach rank 0.
    const port = await rawServer((s, index) => {
      if (index === 0) return;
      const upstream = createConnection({ host: "127.0.0.1", port: real.port });
      upstream.on("error", () => s.destroy());
      s.pipe(upstream).pipe(s);
    });
    // One attempt's bound ends the silent attempt; a budget-long attempt would end in an error.
    expect(await fetch(port, 1, 2, { attemptMs: 300, timeoutMs: 30_000, retryMs: 20 })).toEqual(id);
    await real.done;
  });

  it("a silent server times out attempt by attempt, and the error counts them", async () => {
    const port = await rawServer(() => {});
    await expect(fetch(port, 1, 2, { attemptMs: 100, timeoutMs: 2000, retryMs: 10 })).rejects.toThrow(
      /after ([2-9]|\d\d+) attempt\(s\) \(last: no answer within \d+ ms \(one attempt\)/,
    );
  });
});
