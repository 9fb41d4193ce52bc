import { createConnection, createServer, type Server } from "node:net";

/** What rank 0 sends each peer: a 4-byte magic, then the id. */
const MAGIC = Buffer.from("SYID");

export interface ServeOptions {
  host?: string;
  port: number;
  uniqueId: Uint8Array;
  /** Peers that will fetch it (world size - 1); the server closes after serving them all. */
  peers: number;
  timeoutMs: number;
}

/** A running unique-id server: `done` resolves once every peer has it, rejects on timeout. */
export interface UniqueIdServer {
  readonly port: number;
  readonly done: Promise<void>;
  close(): void;
}

/**
 * Rank 0's side of the environment-driven start: serves the NVSHMEM unique id over TCP to
 * `peers` connections, then closes. Rejects `done` if they have not all come within the timeout.
 */
export function serveUniqueId(o: ServeOptions): Promise<UniqueIdServer> {
  return new Promise((resolveServer, rejectServer) => {
    let served = 0;
    let server: Server | null = null;
    let finish!: (e?: Error) => void;
    const done = new Promise<void>((resolve, reject) => {
      finish = (e) => {
        clearTimeout(timer);
        server?.close();
        if (e) reject(e);
        else resolve();
      };
    });
    done.catch(() => {});
    const timer = setTimeout(
      () =>
        finish(
          new Error(
            `rendezvous: ${o.peers - served} of ${o.peers} ranks did not fetch the unique id from port ${o.port} within ${o.timeoutMs} ms`,
          ),
        ),
      o.timeoutMs,
    );
    server = createServer((socket) => {
      socket.on("error", () => {});
      socket.end(Buffer.concat([MAGIC, Buffer.from(o.uniqueId)]), () => {
        served++;
        if (served >= o.peers) finish();
      });
    });
    server.on("error", (e) => {
      clearTimeout(timer);
      rejectServer(new Error(`rendezvous: cannot serve on ${o.host ?? "0.0.0.0"}:${o.port}: ${e.message}`));
    });
    server.listen(o.port, o.host, () => {
      const addr = server?.address();
      const port = typeof addr === "object" && addr ? addr.port : o.port;
      if (o.peers === 0) finish();
      resolveServer({ port, done, close: () => finish(new Error("rendezvous: closed")) });
    });
  });
}

export interface FetchOptions {
  host: string;
  port: number;
  /** Bytes expected (128 for NVSHMEM). */
  bytes: number;
  timeoutMs: number;
  /** Pause between connection attempts while rank 0 is not listening yet. */
  retryMs?: number;
}

/** A peer's side: connects to rank 0 (retrying until it listens) and reads the unique id. */
export async function fetchUniqueId(o: FetchOptions): Promise<Uint8Array> {
  const deadline = Date.now() + o.timeoutMs;
  let last = "no attempt";
  while (Date.now() < deadline) {
    try {
      return await fetchOnce(o, deadline - Date.now());
    } catch (e) {
      last = (e as Error).message;
      await new Promise((r) => setTimeout(r, o.retryMs ?? 200));
    }
  }
  throw new Error(
    `rendezvous: no unique id from ${o.host}:${o.port} within ${o.timeoutMs} ms (last: ${last}); ` +
      "is rank 0 running, and are MASTER_ADDR / MASTER_PORT the same on every rank?",
  );
}

function fetchOnce(o: FetchOptions, timeoutMs: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = createConnection({ host: o.host, port: o.port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error("timed out reading"));
    }, timeoutMs);
    socket.on("data", (d) => chunks.push(d));
    socket.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    socket.on("end", () => {
      clearTimeout(timer);
      const all = Buffer.concat(chunks);
      if (all.length !== MAGIC.length + o.bytes || !all.subarray(0, MAGIC.length).equals(MAGIC)) {
        reject(new Error(`got ${all.length} bytes that are not a Switchyard unique id`));
        return;
      }
      resolve(new Uint8Array(all.subarray(MAGIC.length)));
    });
  });
}
