import { PARAM_NAMES, SCALAR_PARAMS } from "../layout/params.js";
import { REGION_NAMES } from "../layout/region.js";
import { DEVICE_ERROR_CODES, NO_PEER, RECORD_FAULT_CODES, STAGE_CODES } from "./deviceErrors.js";
import { type ContractCode, constantName } from "./entry.js";
import { generatedNotice, requireDense } from "./generated.js";
import { STATUS_CODES } from "./statuses.js";
import {
  COMBINE_WEIGHTS_CODES,
  DTYPE_CODES,
  LAYOUT_KIND_CODES,
  REGION_DTYPE_CODES,
  SCALE_FORMAT_CODES,
} from "./values.js";

/** Where the Python module is written, relative to the repository root. */
export const CONTRACT_PYTHON_PATH = "packages/cuda/python/switchyard_cuda/_contract.py";

const str = (s: string) => JSON.stringify(s);

function tuple(name: string, doc: string, items: readonly string[]): string[] {
  return [`# ${doc}`, `${name} = (`, ...items.map((i) => `    ${str(i)},`), ")"];
}

function dict(name: string, doc: string, items: [string | number, string | number][]): string[] {
  const key = (k: string | number) => (typeof k === "number" ? String(k) : str(k));
  const val = (v: string | number) => (typeof v === "number" ? String(v) : str(v));
  return [`# ${doc}`, `${name} = {`, ...items.map(([k, v]) => `    ${key(k)}: ${val(v)},`), "}"];
}

/** `PREFIX_NAME = value` for every code, each with its meaning as a comment. */
function constants(prefix: string, codes: readonly ContractCode[]): string[] {
  return codes.map((c) => `${prefix}_${constantName(c.name)} = ${c.value}  # ${c.meaning}`);
}

const labels = (codes: readonly ContractCode[]): [number, string][] => codes.map((c) => [c.value, c.label]);

/** The Python module of the contract: tables of names and one constant per code. */
export function renderContractPython(): string {
  const regionDtypes = Object.entries(REGION_DTYPE_CODES);
  requireDense(
    regionDtypes.map(([, v]) => v),
    "REGION_DTYPE_CODES",
  );
  const blocks = [
    [
      '"""' + generatedNotice("The protocol's names and codes.").join("\n") + '\n"""',
      "",
      "from __future__ import annotations",
    ],
    tuple(
      "REGION_NAMES",
      "Regions in parameter-block order (sy_error_info.region indexes it).",
      REGION_NAMES,
    ),
    tuple("SCALAR_PARAMS", "Scalar parameters, in block order.", SCALAR_PARAMS),
    tuple("PARAM_NAMES", "The parameter block's names in order (sy_layout_param_name).", PARAM_NAMES),
    dict("DTYPES", "sy_dtype: element types on the wire.", Object.entries(DTYPE_CODES)),
    dict("LAYOUTS", "sy_layout_kind: layouts.", Object.entries(LAYOUT_KIND_CODES)),
    dict("SCALE_FORMATS", "sy_scale_format: fp8 block-scale formats.", Object.entries(SCALE_FORMAT_CODES)),
    dict(
      "COMBINE_WEIGHTS",
      "sy_combine_weights: where combine applies the router weights.",
      Object.entries(COMBINE_WEIGHTS_CODES),
    ),
    tuple(
      "REGION_DTYPES",
      "sy_region_dtype: element types of regions, by value.",
      regionDtypes.map(([k]) => k),
    ),
    dict(
      "STATUS_NAMES",
      "sy_status values and names (sy_status_name).",
      STATUS_CODES.map((s) => [s.value, s.label]),
    ),
    dict("STAGES", "sy_error_info.stage: the stage in messages.", labels(STAGE_CODES)),
    dict("CODES", "sy_error_info.code: what a stage kernel recorded.", labels(DEVICE_ERROR_CODES)),
    dict(
      "RECORD_FAULTS",
      "sy_error_info.detail1 of a bad route record: what was wrong.",
      labels(RECORD_FAULT_CODES),
    ),
    ["# sy_status values", ...constants("STATUS", STATUS_CODES)],
    ["# sy_error_info.stage values", ...constants("STAGE", STAGE_CODES)],
    ["# sy_error_info.code values", ...constants("CODE", DEVICE_ERROR_CODES)],
    ["# route record faults", ...constants("FAULT", RECORD_FAULT_CODES)],
    [
      "# sy_error_info.peer when the error is not about one peer",
      `NO_PEER = 0x${NO_PEER.toString(16).toUpperCase()}`,
    ],
  ];
  return `${blocks.map((b) => b.join("\n")).join("\n\n")}\n`;
}
