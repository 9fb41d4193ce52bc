import { describe, expect, it } from "vitest";
import {
  CONTRACT_COMMAND,
  codeNamed,
  codeOf,
  constantName,
  DEVICE_ERROR_CODES,
  DTYPE_CODES,
  LAYOUT_KIND_CODES,
  NO_PEER,
  PARAM_NAMES,
  RECORD_FAULT_CODES,
  REGION_DTYPE_CODES,
  REGION_NAMES,
  renderContractHeader,
  renderContractPython,
  requireDense,
  STAGE_CODES,
  STATUS_CODES,
} from "../src/index.js";

/** The tables as they were written by hand in C, C++, CUDA, TypeScript and Python before the contract. */
const BEFORE = {
  statuses: [
    "SY_OK",
    "SY_ERR_INVALID_ARGUMENT",
    "SY_ERR_CUDA",
    "SY_ERR_NVSHMEM",
    "SY_ERR_TIMEOUT",
    "SY_ERR_PROTOCOL",
    "SY_ERR_UNSUPPORTED",
    "SY_ERR_STATE",
    "SY_ERR_INTERNAL",
    "SY_ERR_NCCL",
    "SY_ERR_PHASE",
  ],
  stages: { 1: "dispatch recv", 2: "combine recv", 3: "dispatch send" },
  stageIds: { 1: "DISPATCH_RECV", 2: "COMBINE_RECV", 3: "DISPATCH_SEND" },
  codes: {
    1: "timeout",
    2: "count too large",
    3: "stale or foreign epoch",
    4: "partials announced != tokens routed",
    5: "aborted",
    6: "bad route record",
    7: "bad input",
  },
  codeIds: {
    1: "TIMEOUT",
    2: "COUNT_TOO_LARGE",
    3: "BAD_EPOCH",
    4: "COUNT_MISMATCH",
    5: "ABORTED",
    6: "BAD_RECORD",
    7: "BAD_INPUT",
  },
  faults: {
    1: "its token is outside [0, maxTokensPerRank)",
    2: "its entry count is outside [1, min(topK, localExperts)]",
    3: "an entry's local expert is outside [0, localExperts)",
    4: "an entry's slot is outside [0, topK)",
    5: "an entry's index is at or past its expert's announced count",
    6: "an entry names an (expert, index) row a second time this step",
  },
  faultIds: { 1: "TOKEN", 2: "ENTRIES", 3: "EXPERT", 4: "SLOT", 5: "INDEX", 6: "TAKEN" },
  regions: [
    "dispatchSignal",
    "dispatchX",
    "dispatchScales",
    "dispatchRoutes",
    "countSignal",
    "combineSignal",
    "combineX",
    "recvX",
    "recvScales",
    "recvMeta",
  ],
  regionIds: [
    "DISPATCH_SIGNAL",
    "DISPATCH_X",
    "DISPATCH_SCALES",
    "DISPATCH_ROUTES",
    "COUNT_SIGNAL",
    "COMBINE_SIGNAL",
    "COMBINE_X",
    "RECV_X",
    "RECV_SCALES",
    "RECV_META",
  ],
  // params.cuh's kParamNames, and the two scalars added after them (scaleFormat, combineAtHome)
  params:
    "ranks,localExperts,maxTokensPerRank,hidden,topK,scalesPerRow,dispatchElemBytes,dpSize," +
    "expertAlignment,rowsPerSource,rows,layoutContiguous,quantize,inputFp8,slotsPerRank,routeWords,experts," +
    "scaleFormat,combineAtHome," +
    "dispatchSignal.offset,dispatchSignal.bytes,dispatchX.offset,dispatchX.bytes," +
    "dispatchScales.offset,dispatchScales.bytes,dispatchRoutes.offset,dispatchRoutes.bytes," +
    "countSignal.offset,countSignal.bytes,combineSignal.offset,combineSignal.bytes," +
    "combineX.offset,combineX.bytes,recvX.offset,recvX.bytes,recvScales.offset,recvScales.bytes," +
    "recvMeta.offset,recvMeta.bytes",
  dtypes: { bf16: 0, "fp8-e4m3": 1 },
  layouts: { masked: 0, contiguous: 1 },
  regionDtypes: { u32: 0, i32: 1, f32: 2, bf16: 3, "fp8-e4m3": 4 },
};

const byValue = (codes: readonly { value: number; label: string }[]) =>
  Object.fromEntries(codes.map((c) => [c.value, c.label]));
const idsByValue = (codes: readonly { value: number; name: string }[]) =>
  Object.fromEntries(codes.map((c) => [c.value, constantName(c.name)]));

describe("core's contract", () => {
  it("has every value, name and C identifier the hand-written tables had", () => {
    expect(STATUS_CODES.map((s) => s.label)).toEqual(BEFORE.statuses);
    expect(STATUS_CODES.map((s) => s.value)).toEqual(BEFORE.statuses.map((_, i) => i));
    expect(byValue(STAGE_CODES)).toEqual(BEFORE.stages);
    expect(idsByValue(STAGE_CODES)).toEqual(BEFORE.stageIds);
    expect(byValue(DEVICE_ERROR_CODES)).toEqual(BEFORE.codes);
    expect(idsByValue(DEVICE_ERROR_CODES)).toEqual(BEFORE.codeIds);
    expect(byValue(RECORD_FAULT_CODES)).toEqual(BEFORE.faults);
    expect(idsByValue(RECORD_FAULT_CODES)).toEqual(BEFORE.faultIds);
    // A region added to REGION_TABLE takes the next index: the ones before keep their names and places.
    expect(REGION_NAMES.slice(0, BEFORE.regions.length)).toEqual(BEFORE.regions);
    expect(REGION_NAMES.slice(0, BEFORE.regions.length).map(constantName)).toEqual(BEFORE.regionIds);
    expect(PARAM_NAMES.slice(0, BEFORE.params.split(",").length).join(",")).toBe(BEFORE.params);
    expect(DTYPE_CODES).toEqual(BEFORE.dtypes);
    expect(LAYOUT_KIND_CODES).toEqual(BEFORE.layouts);
    expect(REGION_DTYPE_CODES).toEqual(BEFORE.regionDtypes);
    expect(NO_PEER).toBe(0xffffffff);
  });

  it("gives every code a distinct value and name, and a meaning", () => {
    for (const codes of [STATUS_CODES, STAGE_CODES, DEVICE_ERROR_CODES, RECORD_FAULT_CODES]) {
      expect(new Set(codes.map((c) => c.value)).size).toBe(codes.length);
      expect(new Set(codes.map((c) => c.name)).size).toBe(codes.length);
      for (const c of codes) expect(c.meaning.length).toBeGreaterThan(0);
    }
  });

  it("finds codes by value and name, and names a missing one", () => {
    expect(codeOf(STAGE_CODES, 2)?.label).toBe("combine recv");
    expect(codeOf(STAGE_CODES, 9)).toBeUndefined();
    expect(codeNamed(DEVICE_ERROR_CODES, "badInput", "DEVICE_ERROR_CODES").value).toBe(7);
    expect(() => codeNamed(DEVICE_ERROR_CODES, "nope", "DEVICE_ERROR_CODES")).toThrow(
      /DEVICE_ERROR_CODES.*"nope"/,
    );
    expect(() => requireDense([0, 2], "T")).toThrow(/T has value 2 at position 1/);
    expect(constantName("fp8-e4m3")).toBe("FP8_E4M3");
    expect(constantName("maxTokensPerRank")).toBe("MAX_TOKENS_PER_RANK");
  });

  it("renders the C header and the Python module, each marked generated with the command", () => {
    const h = renderContractHeader();
    const py = renderContractPython();
    for (const text of [h, py]) {
      expect(text).toContain("do not edit");
      expect(text).toContain(CONTRACT_COMMAND);
    }
    expect(h).toContain("SY_ERR_PHASE = 10");
    expect(h).toContain(`#define SY_PARAM_COUNT ${PARAM_NAMES.length}`);
    expect(h).toContain('X(7, BAD_INPUT, "bad input"');
    expect(py).toContain("CODE_BAD_INPUT = 7");
    expect(renderContractHeader()).toBe(h);
  });
});
