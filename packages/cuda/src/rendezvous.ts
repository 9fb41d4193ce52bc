import { createServer, type Server, type Socket } from "node:net";
import {
  ACK_BYTES,
  ackOk,
  deriveKeys,
  hello,
  nonce,
  type ParsedRequest,
  parseRequest,
  REQUEST_BYTES,
  RendezvousError,
  refusal,
  STATUS,
  sealReply,
} from "./rendezvousWire.js";

export { type FetchOptions, fetchUniqueId } from "./rendezvousClient.js";
export { RendezvousError } from "./rendezvousWire.js";

export interface ServeOptions {
  /** The address to listen on (rank 0's address on the job's network, or 127.0.0.1 on one host); never all interfaces by default. */
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  uniqueId: Uint8Array;
  /** Ranks of the job; ranks 1 .. worldSize - 1 fetch the id, each once. */
  worldSize: number;
  /** The per-job secret every rank shares (see launchSecret.ts for where the command line finds it). */
  secret: Uint8Array;
  /** Bound on the whole rendezvous: `done` rejects when a rank has not fetched the id by then. */
  timeoutMs: number;
  /** Bound on one connection's handshake (default 10 s): a silent or slow connection is dropped, its rank may retry. */
  handshakeMs?: number;
}

/** A running unique-id server: `done` resolves once every rank confirmed the id, rejects on timeout or a server error. */
export interface UniqueIdServer {
  /** The address it listens on (only that one). */
  readonly address: string;
  readonly port: number;
  readonly done: Promise<void>;
  close(): void;
}

/**
 * Rank 0's side of the environment-driven start: serves the NVSHMEM unique id to the ranks of its
 * job only. A connection must answer a fresh challenge with a MAC under the job secret, state the
 * world size and a rank in [1, worldSize); the id goes back sealed (authenticated encryption) and
 * the rank's slot is filled only when it acknowledges a verified id. Connections that stay silent,
 * send too much or fail authentication are dropped without using a slot.
 */
export function serveUniqueId(o: ServeOptions): Promise<UniqueIdServer> {
  const where = `serveUniqueId(${o.host}:${o.port})`;
  let keys: ReturnType<typeof deriveKeys>;
  try {
    keys = deriveKeys(o.secret, where);
    if (!Number.isInteger(o.worldSize) || o.worldSize < 1)
      throw new RendezvousError(where, `worldSize ${o.worldSize} is not a positive integer`);
  } catch (e) {
    return Promise.reject(e);
  }
  const handshakeMs = o.handshakeMs ?? 10_000;
  const acked = new Set<number>();
  const sockets = new Set<Socket>();
  return new Promise((resolveServer, rejectServer) => {
    let listening = false;
    let settled = false;
    let finish!: (e?: Error) => void;
    const done = new Promise<void>((resolve, reject) => {
      finish = (e) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        server.close();
        for (const s of sockets) s.destroy();
        if (e) reject(e);
        else resolve();
      };
    });
    done.catch(() => {});
    const missing = () =>
      Array.from({ length: o.worldSize - 1 }, (_, i) => i + 1).filter((r) => !acked.has(r));
    const timer = setTimeout(() => {
      const m = missing();
      finish(
        new RendezvousError(
          where,
          `rank(s) ${m.join(", ")} (${m.length} of ${o.worldSize - 1}) did not fetch the unique id within ${o.timeoutMs} ms; ` +
            "check that they run, reach this address and share the job secret",
        ),
      );
    }, o.timeoutMs);
    const server: Server = createServer((socket) =>
      handle(socket, (rank) => {
        acked.add(rank);
        if (acked.size >= o.worldSize - 1) finish();
      }),
    );
    server.maxConnections = Math.max(64, 4 * o.worldSize);

    function handle(socket: Socket, onAck: (rank: number) => void): void {
      sockets.add(socket);
      const serverNonce = nonce();
      let buf = Buffer.alloc(0);
      let req: ParsedRequest | null = null;
      const drop = () => socket.destroy();
      const t = setTimeout(drop, handshakeMs);
      socket.on("close", () => {
        clearTimeout(t);
        sockets.delete(socket);
      });
      socket.on("error", () => {});
      socket.on("data", (d: Buffer) => {
        buf = Buffer.concat([buf, d]);
        const need = req ? ACK_BYTES : REQUEST_BYTES;
        if (buf.length > need) return drop(); // more than the protocol allows
        if (buf.length < need) return;
        const msg = buf;
        buf = Buffer.alloc(0);
        if (req) {
          if (ackOk(keys, serverNonce, req.clientNonce, msg)) onAck(req.rank);
          socket.end();
          return;
        }
        const p = parseRequest(keys, serverNonce, msg);
        if (!p) return drop();
        const status = !p.macOk
          ? STATUS.badMac
          : p.world !== o.worldSize
            ? STATUS.wrongWorld
            : p.rank < 1 || p.rank >= o.worldSize
              ? STATUS.badRank
              : STATUS.ok;
        if (status !== STATUS.ok) {
          socket.end(refusal(status));
          return;
        }
        req = p;
        socket.write(sealReply(keys, p, serverNonce, o.uniqueId));
      });
      socket.write(hello(serverNonce));
    }

    server.on("error", (e) => {
      const err = new RendezvousError(
        where,
        `cannot serve: ${e.message}; is the port taken, or the address not this host's?`,
      );
      if (listening) finish(err);
      else {
        clearTimeout(timer);
        settled = true;
        rejectServer(err);
      }
    });
    server.listen(o.port, o.host, () => {
      listening = true;
      const addr = server.address();
      const port = typeof addr === "object" && addr ? addr.port : o.port;
      const address = typeof addr === "object" && addr ? addr.address : o.host;
      if (o.worldSize === 1) finish();
      resolveServer({
        address,
        port,
        done,
        close: () => finish(new RendezvousError(where, "closed before every rank had the id")),
      });
    });
  });
}
