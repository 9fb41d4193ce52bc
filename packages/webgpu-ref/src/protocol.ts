import { decodeSignal, ProtocolError } from "@switchyard/core";
import { FAULT, META_KEY, NONE } from "./faults.js";
import type { SessionPlan } from "./plan.js";

/** The status words a kernel wrote: (key, code, word, a, b, c). */
export type Status = Uint32Array;

export function faulted(status: Status): boolean {
  return status[0] !== NONE;
}

/** Where a signal fault was: the region and the peer that wrote the word. */
interface Where {
  region: string;
  peer: number;
}

/** The dispatch signal word a status key names (core's check order, see dispatch_recv.wgsl). */
function dispatchWord(plan: SessionPlan, key: number): Where & { sum: boolean } {
  const { R, L } = plan;
  if (plan.config.layout === "masked") return { region: "dispatchSignal", peer: key % R, sum: false };
  const s = Math.floor(key / (L + 2));
  const j = key % (L + 2);
  if (j === 0) return { region: "dispatchSignal", peer: s, sum: false };
  return { region: "countSignal", peer: s, sum: j === L + 1 };
}

/**
 * The words of core's readSignal (not exported from core) for a word it refuses, so errors match
 * the reference's text; `peer` is set on every signal fault.
 */
function signalFault(
  rank: number,
  stage: string,
  at: Where,
  code: number,
  word: number,
  epoch: number,
  max: number,
) {
  const who = `signal from rank ${at.peer}`;
  const s = decodeSignal(word);
  switch (code) {
    case FAULT.MISSING:
      return new ProtocolError(rank, stage, at.region, `${who} is missing (never written)`, at.peer);
    case FAULT.STALE:
      return new ProtocolError(
        rank,
        stage,
        at.region,
        `${who} is stale: epoch ${s?.epoch}, this step is epoch ${epoch}`,
        at.peer,
      );
    case FAULT.MALFORMED:
      return new ProtocolError(
        rank,
        stage,
        at.region,
        `${who} is malformed: word 0x${word.toString(16)} has a zero count field (it holds count + 1)`,
        at.peer,
      );
    case FAULT.TOO_MANY:
      return new ProtocolError(
        rank,
        stage,
        at.region,
        `${who} counts ${s?.count} rows, more than the ${max} possible`,
        at.peer,
      );
    default:
      return new ProtocolError(
        rank,
        stage,
        at.region,
        `${who}: unknown fault code ${code} (word 0x${word.toString(16)})`,
        at.peer,
      );
  }
}

/** The ProtocolError of a dispatch receive's status. */
export function dispatchRecvError(
  plan: SessionPlan,
  rank: number,
  status: Status,
  epoch: number,
): ProtocolError {
  const [key, code, word, a, b] = status;
  const at = dispatchWord(plan, key);
  if (code === FAULT.SUM) {
    return new ProtocolError(
      rank,
      "dispatch recv",
      "countSignal",
      `rank ${at.peer} announced ${a} rows but its per-expert counts add up to ${b}`,
      at.peer,
    );
  }
  return signalFault(rank, "dispatch recv", at, code, word, epoch, a);
}

/** The ProtocolError of a combine send's status. */
export function combineSendError(plan: SessionPlan, rank: number, status: Status): ProtocolError {
  const [key, code, word, a] = status;
  if (code === FAULT.META) {
    const region = plan.config.layout === "masked" ? "dispatchMeta" : "recvMeta";
    return new ProtocolError(
      rank,
      "combine send",
      region,
      `delivered row ${key - META_KEY} (result row ${word}) has meta naming source rank ${a}, ` +
        `or a token or slot, outside the world; its expert output has no home`,
    );
  }
  const at = dispatchWord(plan, key);
  const fmt = (w: number) => {
    const s = decodeSignal(w);
    return s ? `epoch ${s.epoch}, count ${s.count}` : "never written";
  };
  return new ProtocolError(
    rank,
    "combine send",
    at.region,
    `signal from rank ${at.peer} changed after dispatch recv checked it (then ${fmt(a)}, now ${fmt(word)}): ` +
      "a late or duplicated signal",
    at.peer,
  );
}

/** The ProtocolError of a combine receive's status. */
export function combineRecvError(rank: number, status: Status, epoch: number): ProtocolError {
  const [key, code, word, a, b] = status;
  if (code === FAULT.ROWS) {
    return new ProtocolError(
      rank,
      "combine recv",
      "combineSignal",
      `expert rank ${key} announced ${a} rows, this rank's tokens route ${b} slots to it`,
      key,
    );
  }
  return signalFault(rank, "combine recv", { region: "combineSignal", peer: key }, code, word, epoch, a);
}
