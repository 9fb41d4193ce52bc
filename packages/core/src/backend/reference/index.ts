import type { EpConfig } from "../../config.js";
import type { Backend, Capabilities, SessionOptions } from "../types.js";
import { ReferenceSession } from "./session.js";

const capabilities: Capabilities = Object.freeze({
  layouts: ["masked", "contiguous"],
  inputDtypes: ["bf16", "fp8-e4m3"],
  dispatchDtypes: ["bf16", "fp8-e4m3"],
  maxRanks: 64,
  maxHidden: 1 << 16,
  maxTopK: 64,
  hiddenMultiple: 1,
  dpGroups: true,
  deterministicRowOrder: true,
  stats: true,
  scaleFormats: Object.freeze(["pow2", "amax", "ue8m0"] as const),
  combineWeights: Object.freeze(["expert", "home"] as const),
} as const);

/** The protocol simulated in TypeScript over ArrayBuffer heaps. Always available. */
export const referenceBackend: Backend = {
  name: "reference",
  capabilities,
  unavailableReason: async () => null,
  // The simulation never waits: a signal that is missing when read is a ProtocolError at once.
  createSession: async (config: EpConfig, _options?: SessionOptions) => {
    return new ReferenceSession(config);
  },
};
