import { fetchUniqueId, serveUniqueId } from "./rendezvous.js";

/** Where this rank is and how it finds rank 0, all given explicitly (the command-line layer reads them from the environment). */
export interface RankPlace {
  rank: number;
  worldSize: number;
  /** Rank 0's rendezvous address: rank 0 listens on it, the others connect to it. */
  addr: string;
  port: number;
  /** The per-job secret every rank shares. */
  secret: Uint8Array;
}

export interface ShareOptions {
  /** Bound on the whole exchange (every rank). */
  timeoutMs: number;
  /** Bound on one connection attempt of a peer (default 10 s). */
  attemptMs?: number;
  /** Bytes of the id (peers check the length). */
  bytes: number;
}

/**
 * Hands rank 0's id to every rank and returns it, on rank 0 only once every peer has confirmed
 * it: a collective that blocks the JavaScript thread (NVSHMEM init) must start after this, or
 * rank 0 would stop answering the peers that still wait for the id and every rank would hang.
 * `makeId` runs on rank 0 only.
 */
export async function shareUniqueId(
  place: RankPlace,
  makeId: () => Uint8Array,
  o: ShareOptions,
): Promise<Uint8Array> {
  if (place.rank !== 0) {
    return fetchUniqueId({
      host: place.addr,
      port: place.port,
      bytes: o.bytes,
      rank: place.rank,
      worldSize: place.worldSize,
      secret: place.secret,
      timeoutMs: o.timeoutMs,
      attemptMs: o.attemptMs,
    });
  }
  const uniqueId = makeId();
  if (place.worldSize === 1) return uniqueId;
  const server = await serveUniqueId({
    host: place.addr,
    port: place.port,
    uniqueId,
    worldSize: place.worldSize,
    secret: place.secret,
    timeoutMs: o.timeoutMs,
  });
  await server.done;
  return uniqueId;
}
