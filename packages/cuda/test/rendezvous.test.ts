import { describe, expect, it } from "vitest";
import { fetchUniqueId, serveUniqueId } from "../src/rendezvous.js";

describe("unique-id rendezvous over loopback", () => {
  it("rank 0 serves the id to every peer, then closes", async () => {
    const id = Uint8Array.from({ length: 128 }, (_, i) => (i * 7) & 0xff);
    const server = await serveUniqueId({
      host: "127.0.0.1",
      port: 0,
      uniqueId: id,
      peers: 3,
      timeoutMs: 5000,
    });
    const got = await Promise.all(
      [1, 2, 3].map(() =>
        fetchUniqueId({ host: "127.0.0.1", port: server.port, bytes: 128, timeoutMs: 5000 }),
      ),
    );
    for (const g of got) expect(g).toEqual(id);
    await server.done;
  });

  it("a peer retries until rank 0 listens", async () => {
    const probe = await serveUniqueId({
      host: "127.0.0.1",
      port: 0,
      uniqueId: new Uint8Array(128),
      peers: 0,
      timeoutMs: 1000,
    });
    const port = probe.port;
    await probe.done;
    const fetching = fetchUniqueId({ host: "127.0.0.1", port, bytes: 128, timeoutMs: 5000, retryMs: 50 });
    await new Promise((r) => setTimeout(r, 300));
    const server = await serveUniqueId({
      host: "127.0.0.1",
      port,
      uniqueId: new Uint8Array(128).fill(9),
      peers: 1,
      timeoutMs: 5000,
    });
    expect((await fetching)[0]).toBe(9);
    await server.done;
  });

  it("times out with the address instead of hanging", async () => {
    const probe = await serveUniqueId({
      host: "127.0.0.1",
      port: 0,
      uniqueId: new Uint8Array(128),
      peers: 0,
      timeoutMs: 1000,
    });
    await probe.done;
    await expect(
      fetchUniqueId({ host: "127.0.0.1", port: probe.port, bytes: 128, timeoutMs: 300, retryMs: 50 }),
    ).rejects.toThrow(new RegExp(`no unique id from 127.0.0.1:${probe.port} within 300 ms`));
  });

  it("rank 0 gives up on peers that never come", async () => {
    const server = await serveUniqueId({
      host: "127.0.0.1",
      port: 0,
      uniqueId: new Uint8Array(128),
      peers: 2,
      timeoutMs: 200,
    });
    await expect(server.done).rejects.toThrow(/2 of 2 ranks did not fetch/);
  });
});
