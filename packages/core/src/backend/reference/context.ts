import type { EpConfig } from "../../config.js";
import { ProtocolError } from "../../errors.js";
import type { Layout } from "../../layout/layout.js";
import { decodeSignal } from "../../signal.js";
import type { RankHeap } from "./heap.js";

/** What every stage of the simulated protocol sees: the world's heaps and this step's epoch. */
export interface StepContext {
  config: Readonly<EpConfig>;
  layout: Layout;
  heaps: RankHeap[];
  epoch: number;
}

/**
 * Reads a signal word the way a receive stage must: it has to be written, carry this step's
 * epoch, and hold a count no larger than `max`. Anything else is a `ProtocolError` naming the
 * rank, stage, region and peer.
 */
export function readSignal(
  word: number,
  where: { rank: number; stage: string; region: string; peer: number; epoch: number; max: number },
): number {
  const s = decodeSignal(word);
  const at = `signal from rank ${where.peer}`;
  const fail = (detail: string) =>
    new ProtocolError(where.rank, where.stage, where.region, detail, where.peer);
  if (s === null) throw fail(`${at} is missing (never written)`);
  if (s.epoch !== where.epoch)
    throw fail(`${at} is stale: epoch ${s.epoch}, this step is epoch ${where.epoch}`);
  if (s.count < 0) {
    throw fail(`${at} is malformed: word 0x${word.toString(16)} has a zero count field (it holds count + 1)`);
  }
  if (s.count > where.max) throw fail(`${at} counts ${s.count} rows, more than the ${where.max} possible`);
  return s.count;
}
