/**
 * Signal words: one u32 that a sender writes after its data, telling the receiver "my rows for
 * this region are complete, and there are `count` of them". The word packs the step's epoch in
 * the top 11 bits and `count + 1` in the low 21 bits, so:
 * - 0 (the initial value of every buffer) never means "arrived";
 * - a zero count is still distinguishable from "not yet" (it is stored as 1);
 * - a word left over from an earlier step has another epoch and is never taken for this step's.
 *
 * Epochs run 1..2047 and wrap: step s (counted from 0 per session) has epoch (s % 2047) + 1.
 */
export const SIGNAL_COUNT_BITS = 21;
export const SIGNAL_EPOCHS = 2047;

export function epochOfStep(step: number): number {
  return (step % SIGNAL_EPOCHS) + 1;
}

export function encodeSignal(epoch: number, count: number): number {
  return ((epoch << SIGNAL_COUNT_BITS) | (count + 1)) >>> 0;
}

/** Decodes a signal word; `null` for 0 (never written). */
export function decodeSignal(word: number): { epoch: number; count: number } | null {
  if (word === 0) return null;
  return { epoch: word >>> SIGNAL_COUNT_BITS, count: (word & ((1 << SIGNAL_COUNT_BITS) - 1)) - 1 };
}
