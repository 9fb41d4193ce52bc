import { createConnection } from "node:net";
import {
  ack,
  deriveKeys,
  HELLO_BYTES,
  type Keys,
  MAGIC,
  nonce,
  openReply,
  REPLY_HEAD_BYTES,
  RendezvousError,
  replyBytes,
  request,
  STATUS,
  STATUS_TEXT,
} from "./rendezvousWire.js";

export interface FetchOptions {
  host: string;
  port: number;
  /** Bytes of the id (128 for NVSHMEM). */
  bytes: number;
  /** This rank (1 .. worldSize - 1) and the job's world size, both checked by rank 0. */
  rank: number;
  worldSize: number;
  /** The per-job secret every rank shares. */
  secret: Uint8Array;
  /** Bound on the whole fetch, retries included. */
  timeoutMs: number;
  /** Bound on one connection attempt (default 10 s, and never past the whole bound). */
  attemptMs?: number;
  /** Pause between attempts while rank 0 is not listening yet (default 200 ms). */
  retryMs?: number;
}

/** A failure no retry can fix: the server at the address is not our rank 0. */
class Forged extends Error {}

/** Rank 0 answered and refused the request (its status says why); a later attempt may succeed. */
class Refused extends Error {}

/**
 * A peer's side: connects to rank 0, retrying (each attempt bounded by `attemptMs`) until the
 * whole `timeoutMs` is spent, answers its challenge, and returns the id once its seal verifies.
 * An id that does not verify (a server that is not this job's rank 0) is refused at once, as is a
 * reply longer than the protocol's.
 */
export async function fetchUniqueId(o: FetchOptions): Promise<Uint8Array> {
  const where = `fetchUniqueId(rank ${o.rank}, ${o.host}:${o.port})`;
  const keys = deriveKeys(o.secret, where);
  const deadline = Date.now() + o.timeoutMs;
  let last = "no attempt";
  let refused: string | null = null; // rank 0's last refusal: kept when a later attempt only times out
  let attempts = 0;
  while (Date.now() < deadline) {
    attempts++;
    const ms = Math.max(1, Math.min(o.attemptMs ?? 10_000, deadline - Date.now()));
    try {
      return await fetchOnce(o, keys, ms);
    } catch (e) {
      if (e instanceof Forged) throw new RendezvousError(where, e.message);
      last = (e as Error).message;
      if (e instanceof Refused) refused = last;
    }
    const pause = Math.min(o.retryMs ?? 200, deadline - Date.now());
    if (pause > 0) await new Promise((r) => setTimeout(r, pause));
  }
  throw new RendezvousError(
    where,
    `no unique id within ${o.timeoutMs} ms after ${attempts} attempt(s) (last: ${last}` +
      `${refused !== null && refused !== last ? `; rank 0's last answer: ${refused}` : ""}); is rank 0 running, and do ` +
      "every rank's rendezvous address and port (SWITCHYARD_RENDEZVOUS_ADDR / _PORT, else MASTER_ADDR / MASTER_PORT + 17) agree?",
  );
}

function fetchOnce(o: FetchOptions, keys: Keys, timeoutMs: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: o.host, port: o.port });
    const clientNonce = nonce();
    let serverNonce: Buffer | null = null;
    let buf = Buffer.alloc(0);
    let settled = false;
    const settle = (e: Error | null, id?: Uint8Array) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (e) {
        socket.destroy();
        reject(e);
      } else resolve(id!);
    };
    const timer = setTimeout(
      () => settle(new Error(`no answer within ${timeoutMs} ms (one attempt)`)),
      timeoutMs,
    );
    socket.on("error", (e) => settle(e));
    socket.on("close", () => settle(new Error(`connection closed after ${buf.length} bytes`)));
    socket.on("data", (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (!serverNonce) {
        if (buf.length < HELLO_BYTES) return;
        if (buf.length > HELLO_BYTES || !buf.subarray(0, 4).equals(MAGIC.hello))
          return settle(new Error("the server's greeting is not a Switchyard rendezvous"));
        serverNonce = buf.subarray(4);
        buf = Buffer.alloc(0);
        socket.write(request(keys, serverNonce, o.worldSize, o.rank, clientNonce));
        return;
      }
      const full = replyBytes(o.bytes);
      if (buf.length > full)
        return settle(new Forged(`the reply is longer than the protocol's ${full} bytes; refused`));
      if (buf.length < REPLY_HEAD_BYTES) return;
      if (!buf.subarray(0, 4).equals(MAGIC.reply))
        return settle(new Error("the server's reply is not a Switchyard rendezvous reply"));
      const status = buf[4];
      if (status !== STATUS.ok)
        return settle(new Refused(STATUS_TEXT[status] ?? `rank 0 refused (status ${status})`));
      if (buf.length < full) return;
      const id = openReply(keys, buf, serverNonce, clientNonce, o.worldSize, o.rank);
      if (!id)
        return settle(
          new Forged(
            "the id does not verify under the job secret: the server on that port is not this job's rank 0 " +
              "(another process holds the port, or the job secret differs between ranks)",
          ),
        );
      socket.end(ack(keys, serverNonce, clientNonce));
      settle(null, id);
    });
  });
}
