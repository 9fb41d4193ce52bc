import type { ContractCode } from "./entry.js";

/** The stage whose wait or check failed (`sy_error_info.stage`). `label` is the stage in messages. */
export const STAGE_CODES: readonly ContractCode[] = Object.freeze([
  {
    value: 1,
    name: "dispatchRecv",
    label: "dispatch recv",
    meaning: "dispatch receive waits for every source",
  },
  {
    value: 2,
    name: "combineRecv",
    label: "combine recv",
    meaning: "combine receive waits for every expert rank",
  },
  {
    value: 3,
    name: "dispatchSend",
    label: "dispatch send",
    meaning: "contiguous dispatch send waits for every rank's counts",
  },
]);

/**
 * What a stage kernel recorded (`sy_error_info.code`, 0 = none). `label` is the error field the
 * Python package reports.
 */
export const DEVICE_ERROR_CODES: readonly ContractCode[] = Object.freeze([
  { value: 1, name: "timeout", label: "timeout", meaning: "a peer's signal did not arrive in time" },
  {
    value: 2,
    name: "countTooLarge",
    label: "count too large",
    meaning: "a signal announced more rows than the region holds",
  },
  {
    value: 3,
    name: "badEpoch",
    label: "stale or foreign epoch",
    meaning: "a signal carried an epoch that is neither this step's nor the previous one",
  },
  {
    value: 4,
    name: "countMismatch",
    label: "partials announced != tokens routed",
    meaning: "rows or partials announced differ from those routed or written",
  },
  {
    value: 5,
    name: "aborted",
    label: "aborted",
    meaning: "written by the host when the endpoint is destroyed: every wait leaves at once",
  },
  {
    value: 6,
    name: "badRecord",
    label: "bad route record",
    meaning: "a route record broke the protocol (detail0 = record j, detail1 = its record fault)",
  },
  {
    value: 7,
    name: "badInput",
    label: "bad input",
    meaning: "a topkIdx entry is out of range or repeated; nothing was sent",
  },
]);

/** What was wrong with a route record (`sy_error_info.detail1` of code badRecord). `label`: the message's words. */
export const RECORD_FAULT_CODES: readonly ContractCode[] = Object.freeze([
  {
    value: 1,
    name: "token",
    label: "its token is outside [0, maxTokensPerRank)",
    meaning: "srcToken outside [0, M)",
  },
  {
    value: 2,
    name: "entries",
    label: "its entry count is outside [1, min(topK, localExperts)]",
    meaning: "n outside [1, J]",
  },
  {
    value: 3,
    name: "expert",
    label: "an entry's local expert is outside [0, localExperts)",
    meaning: "a local expert outside [0, L)",
  },
  { value: 4, name: "slot", label: "an entry's slot is outside [0, topK)", meaning: "a slot outside [0, K)" },
  {
    value: 5,
    name: "index",
    label: "an entry's index is at or past its expert's announced count",
    meaning: "an index at or past the expert's announced count",
  },
  {
    value: 6,
    name: "taken",
    label: "an entry names an (expert, index) row a second time this step",
    meaning: "an (expert, index) row an earlier entry of this step already named",
  },
]);

/** `sy_error_info.peer` when the error is not about one peer. */
export const NO_PEER = 0xffffffff;
