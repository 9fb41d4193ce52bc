// @ts-check
// A backend as a vendor would start one, outside the Switchyard repository: every session call
// is forwarded to core's reference backend. Replace each forwarded call with your hardware's
// (keep core's validation: validateRankInput, validateExpertOut, validateRank), narrow
// `capabilities` to what you support, and the suite tells you what still differs.
import { referenceBackend } from "@switchyard/core";

/** @typedef {import("@switchyard/core").Backend} Backend */
/** @typedef {import("@switchyard/core").Capabilities} Capabilities */
/** @typedef {import("@switchyard/core").Session} Session */

/** What this backend supports; the suite skips the rest, saying why. @type {Capabilities} */
const capabilities = {
  layouts: ["masked", "contiguous"],
  inputDtypes: ["bf16", "fp8-e4m3"],
  dispatchDtypes: ["bf16", "fp8-e4m3"],
  maxRanks: 8,
  maxHidden: 4096,
  maxTopK: 8,
  hiddenMultiple: 1,
  dpGroups: true,
  deterministicRowOrder: true,
};

/** @type {Backend} */
export const backend = {
  name: "template",
  capabilities,
  // null: this backend can run here. A real one says why not and what to do (never throws).
  unavailableReason: async () => null,
  async createSession(config, options) {
    /** @type {Session} */
    const inner = await referenceBackend.createSession(config, options);
    return {
      config: inner.config,
      layout: inner.layout,
      dispatchSend: (rank, input) => inner.dispatchSend(rank, input),
      dispatchRecv: (rank) => inner.dispatchRecv(rank),
      combineSend: (rank, expertOut) => inner.combineSend(rank, expertOut),
      combineRecv: (rank) => inner.combineRecv(rank),
      destroy: () => inner.destroy(),
    };
  },
};
