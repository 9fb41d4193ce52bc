import { decodeSignal, ProtocolError } from "@switchyard/core";
import { FAULT, REGION } from "./faults.js";
import type { SessionPlan } from "./plan.js";

/** The status words a kernel wrote: (peer, code, value, a, b, c, d, 0). */
export type Status = Uint32Array;

export function faulted(status: Status): boolean {
  return status[0] !== 0xffffffff;
}

/**
 * The words of core's readSignal for a word it refuses, so errors match the reference's text;
 * `peer` is set on every signal fault.
 */
function signalFault(
  rank: number,
  stage: string,
  region: string,
  peer: number,
  code: number,
  word: number,
  epoch: number,
  max: number,
) {
  const who = `signal from rank ${peer}`;
  const s = decodeSignal(word);
  const fail = (detail: string) => new ProtocolError(rank, stage, region, detail, peer);
  switch (code) {
    case FAULT.MISSING:
      return fail(`${who} is missing (never written)`);
    case FAULT.STALE:
      return fail(`${who} is stale: epoch ${s?.epoch}, this step is epoch ${epoch}`);
    case FAULT.MALFORMED:
      return fail(
        `${who} is malformed: word 0x${word.toString(16)} has a zero count field (it holds count + 1)`,
      );
    case FAULT.TOO_MANY:
      return fail(`${who} counts ${s?.count} rows, more than the ${max} possible`);
    default:
      return fail(`${who}: unknown fault code ${code} (word 0x${word.toString(16)})`);
  }
}

/**
 * The ProtocolError of receive.wgsl's status (core's readReceived): a signal of dispatchSignal or
 * countSignal, or a route record; `stage` is "dispatch recv" or "combine send".
 */
export function receiveError(
  plan: SessionPlan,
  rank: number,
  stage: string,
  status: Status,
  epoch: number,
): ProtocolError {
  const [s, code, value, a, b, c, d] = status;
  if (code <= FAULT.TOO_MANY) {
    const region = b === REGION.COUNT ? "countSignal" : "dispatchSignal";
    return signalFault(rank, stage, region, s, code, value, epoch, a);
  }
  const v = value | 0;
  const record = (detail: string) =>
    new ProtocolError(rank, stage, "dispatchRoutes", `record ${a} from rank ${s}: ${detail}`, s);
  const { L, M, K } = plan;
  switch (code) {
    case FAULT.TOKEN:
      return record(`token ${v} outside [0, ${M})`);
    case FAULT.ENTRIES:
      return record(`${v} entries, expected 1..${plan.layout.slotsPerRank}`);
    case FAULT.EXPERT:
      return record(`entry ${b}: local expert ${v} outside [0, ${L})`);
    case FAULT.SLOT:
      return record(`entry ${b}: slot ${v} outside [0, ${K})`);
    case FAULT.INDEX:
      return record(`entry ${b}: index ${v} for local expert ${c}, which was announced ${d} rows`);
    case FAULT.DUPLICATE:
      return new ProtocolError(
        rank,
        stage,
        "dispatchRoutes",
        `record ${a} from rank ${s} names local expert ${c}'s index ${v} a second time`,
        s,
      );
    case FAULT.SEEN:
      return new ProtocolError(
        rank,
        stage,
        "dispatchRoutes",
        `rank ${s}'s records name local expert ${a} ${v} times, its count announced ${b}`,
        s,
      );
    default:
      return new ProtocolError(rank, stage, "dispatchRoutes", `unknown fault code ${code} from rank ${s}`, s);
  }
}

/**
 * The ProtocolError of a combine receive's status; `home` (combineWeights home): an expert rank's
 * signal counts tokens, not partials.
 */
export function combineRecvError(rank: number, status: Status, epoch: number, home = false): ProtocolError {
  const [peer, code, word, a, b] = status;
  if (code === FAULT.ROWS) {
    return new ProtocolError(
      rank,
      "combine recv",
      "combineSignal",
      `expert rank ${peer} announced ${a} ${home ? "tokens" : "partials"}, ${b} of this rank's tokens route to it`,
      peer,
    );
  }
  return signalFault(rank, "combine recv", "combineSignal", peer, code, word, epoch, a);
}
