import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { SwitchyardError } from "@switchyard/core";

/**
 * The rendezvous wire format (version 1). Every message has a fixed size, so both sides read a
 * bounded number of bytes:
 * - hello, server to client: "SYH1" | server nonce (16)
 * - request, client to server: "SYQ1" | world u32 | rank u32 | client nonce (16) | mac (32)
 *   mac = HMAC-SHA256(mac key, "request" | server nonce | world | rank | client nonce)
 * - reply, server to client: "SYP1" | status u8, then for status 0 only: iv (12) | the id sealed
 *   with AES-256-GCM under the sealing key (id bytes) | tag (16), authenticating
 *   "reply" | server nonce | client nonce | world | rank
 * - ack, client to server: "SYA1" | first 16 bytes of HMAC(mac key, "ack" | server nonce | client nonce)
 * Both keys come from the per-job secret; a party without it can neither ask for the id (no valid
 * mac over a fresh server nonce), read it (sealed), nor hand out a forged one (the tag fails).
 */
export const HELLO_BYTES = 20;
export const REQUEST_BYTES = 60;
export const REPLY_HEAD_BYTES = 5;
export const ACK_BYTES = 20;
const NONCE = 16;
const IV = 12;
const TAG = 16;

export const MAGIC = {
  hello: Buffer.from("SYH1"),
  request: Buffer.from("SYQ1"),
  reply: Buffer.from("SYP1"),
  ack: Buffer.from("SYA1"),
};

/** Reply statuses; only 0 carries an id. The others are unauthenticated hints for the message. */
export const STATUS = { ok: 0, badMac: 1, wrongWorld: 2, badRank: 3 } as const;

export const STATUS_TEXT: Record<number, string> = {
  1: "rank 0 refused the request's authentication: the job secret differs between ranks",
  2: "rank 0 runs a world of another size",
  3: "rank 0 refused the rank number",
};

/** The rendezvous failed: `detail` says where and what to check. */
export class RendezvousError extends SwitchyardError {
  override name = "RendezvousError";
  constructor(
    readonly where: string,
    detail: string,
  ) {
    super(`rendezvous, ${where}: ${detail}`);
  }
}

export interface Keys {
  mac: Buffer;
  seal: Buffer;
}

/** The two keys of a job secret (at least 1 byte; every rank passes the same bytes). */
export function deriveKeys(secret: Uint8Array, who: string): Keys {
  if (!(secret instanceof Uint8Array) || secret.length === 0) {
    throw new RendezvousError(who, "the job secret is empty; pass the bytes every rank of the job shares");
  }
  const key = (label: string) =>
    createHmac("sha256", secret).update(`switchyard rendezvous v1 ${label}`).digest();
  return { mac: key("mac"), seal: key("seal") };
}

function u32s(...values: number[]): Buffer {
  const b = Buffer.alloc(4 * values.length);
  values.forEach((v, i) => {
    b.writeUInt32BE(v >>> 0, 4 * i);
  });
  return b;
}

function hmac(key: Buffer, label: string, ...parts: Buffer[]): Buffer {
  const h = createHmac("sha256", key).update(label);
  for (const p of parts) h.update(p);
  return h.digest();
}

export function nonce(): Buffer {
  return randomBytes(NONCE);
}

export function hello(serverNonce: Buffer): Buffer {
  return Buffer.concat([MAGIC.hello, serverNonce]);
}

export function request(keys: Keys, serverNonce: Buffer, world: number, rank: number, clientNonce: Buffer) {
  const mac = hmac(keys.mac, "request", serverNonce, u32s(world, rank), clientNonce);
  return Buffer.concat([MAGIC.request, u32s(world, rank), clientNonce, mac]);
}

export interface ParsedRequest {
  world: number;
  rank: number;
  clientNonce: Buffer;
  macOk: boolean;
}

export function parseRequest(keys: Keys, serverNonce: Buffer, b: Buffer): ParsedRequest | null {
  if (b.length !== REQUEST_BYTES || !b.subarray(0, 4).equals(MAGIC.request)) return null;
  const world = b.readUInt32BE(4);
  const rank = b.readUInt32BE(8);
  const clientNonce = b.subarray(12, 12 + NONCE);
  const want = hmac(keys.mac, "request", serverNonce, u32s(world, rank), clientNonce);
  return { world, rank, clientNonce, macOk: timingSafeEqual(want, b.subarray(28, 60)) };
}

export function replyBytes(idBytes: number): number {
  return REPLY_HEAD_BYTES + IV + idBytes + TAG;
}

function aad(serverNonce: Buffer, clientNonce: Buffer, world: number, rank: number): Buffer {
  return Buffer.concat([Buffer.from("reply"), serverNonce, clientNonce, u32s(world, rank)]);
}

export function sealReply(keys: Keys, p: ParsedRequest, serverNonce: Buffer, id: Uint8Array): Buffer {
  const iv = randomBytes(IV);
  const c = createCipheriv("aes-256-gcm", keys.seal, iv);
  c.setAAD(aad(serverNonce, p.clientNonce, p.world, p.rank));
  const body = Buffer.concat([c.update(id), c.final()]);
  return Buffer.concat([MAGIC.reply, Buffer.of(STATUS.ok), iv, body, c.getAuthTag()]);
}

export function refusal(status: number): Buffer {
  return Buffer.concat([MAGIC.reply, Buffer.of(status)]);
}

/** The id in a status-0 reply of exactly `replyBytes(idBytes)`, or null when its tag does not verify. */
export function openReply(
  keys: Keys,
  b: Buffer,
  serverNonce: Buffer,
  clientNonce: Buffer,
  world: number,
  rank: number,
): Uint8Array | null {
  const iv = b.subarray(REPLY_HEAD_BYTES, REPLY_HEAD_BYTES + IV);
  const body = b.subarray(REPLY_HEAD_BYTES + IV, b.length - TAG);
  const d = createDecipheriv("aes-256-gcm", keys.seal, iv);
  d.setAAD(aad(serverNonce, clientNonce, world, rank));
  d.setAuthTag(b.subarray(b.length - TAG));
  try {
    return new Uint8Array(Buffer.concat([d.update(body), d.final()]));
  } catch {
    return null;
  }
}

export function ack(keys: Keys, serverNonce: Buffer, clientNonce: Buffer): Buffer {
  return Buffer.concat([MAGIC.ack, hmac(keys.mac, "ack", serverNonce, clientNonce).subarray(0, 16)]);
}

export function ackOk(keys: Keys, serverNonce: Buffer, clientNonce: Buffer, b: Buffer): boolean {
  const want = ack(keys, serverNonce, clientNonce);
  return b.length === ACK_BYTES && timingSafeEqual(want, b);
}
