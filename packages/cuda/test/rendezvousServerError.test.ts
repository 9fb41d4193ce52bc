import type { Server } from "node:net";
import { describe, expect, it, vi } from "vitest";

const servers: Server[] = [];

// Keeps every server the rendezvous creates, so the test can make one fail after it listens.
vi.mock("node:net", async (importOriginal) => {
  const net = await importOriginal<typeof import("node:net")>();
  return {
    ...net,
    createServer: (...args: Parameters<typeof net.createServer>) => {
      const s = net.createServer(...args);
      servers.push(s);
      return s;
    },
  };
});

const { serveUniqueId } = await import("../src/rendezvous.js");

describe("serveUniqueId after it listens", () => {
  it("a server error rejects done at once, naming the address, instead of waiting out the timeout", async () => {
    const server = await serveUniqueId({
      host: "127.0.0.1",
      port: 0,
      uniqueId: new Uint8Array(128),
      worldSize: 2,
      secret: new Uint8Array([1]),
      timeoutMs: 60_000,
    });
    servers.at(-1)!.emit("error", Object.assign(new Error("accept failed: EMFILE"), { code: "EMFILE" }));
    await expect(server.done).rejects.toThrow(
      /serveUniqueId\(127\.0\.0\.1:0\): cannot serve: accept failed: EMFILE/,
    );
  });

  it("an empty job secret is refused as a rejection, not a throw", async () => {
    const serving = serveUniqueId({
      host: "127.0.0.1",
      port: 0,
      uniqueId: new Uint8Array(128),
      worldSize: 2,
      secret: new Uint8Array(0),
      timeoutMs: 1000,
    });
    await expect(serving).rejects.toThrow(/the job secret is empty/);
  });
});
