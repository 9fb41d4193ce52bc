/**
 * Fault codes the receive kernels write into the status words (the same numbers reach WGSL as
 * FAULT_* constants through the generated header, see shaders.ts). The status words are
 * (peer, code, value, a, b, c, d, 0); protocol.ts turns them into core's ProtocolError.
 */
export const FAULT = {
  /** A signal word is 0: never written. (value = word, a = most it may count, b = REGION_*) */
  MISSING: 1,
  /** A signal word carries another step's epoch. */
  STALE: 2,
  /** A signal word's count field is 0 (count + 1 is never 0). */
  MALFORMED: 3,
  /** A signal word counts more than its region holds. */
  TOO_MANY: 4,
  /** combine recv: an expert rank announces another number of partials (home: tokens) than this rank's tokens route to it (a = announced, b = expected). */
  ROWS: 5,
  /** A route record's token is outside [0, M) (value = token, a = record j). */
  TOKEN: 6,
  /** A route record's entry count is outside 1..J (value = n, a = j). */
  ENTRIES: 7,
  /** An entry's local expert is outside [0, L) (value, a = j, b = entry i). */
  EXPERT: 8,
  /** An entry's slot is outside [0, K) (value, a = j, b = i). */
  SLOT: 9,
  /** An entry's index is not below its expert's announced count (value, a = j, b = i, c = expert, d = count). */
  INDEX: 10,
  /** An entry names an (expert, index) row a second time (value = index, a = j, b = i, c = expert). */
  DUPLICATE: 11,
  /** A source's records name a local expert another number of times than its count (value = times, a = expert, b = count). */
  SEEN: 12,
} as const;

/** Which signal region a signal fault of the dispatch receive is in (status word b). */
export const REGION = { COUNT: 0, DISPATCH: 1 } as const;

/** The status key when nothing is wrong. */
export const NONE = 0xffffffff;
/** deliv marks padding rows with this bit (the low bits hold the local expert). */
export const PAD = 0x80000000;
