import { PARAM_NAMES, SCALAR_PARAMS } from "../layout/params.js";
import { REGION_NAMES } from "../layout/region.js";
import { DEVICE_ERROR_CODES, RECORD_FAULT_CODES, STAGE_CODES } from "./deviceErrors.js";
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

/** Where the C header is written, relative to the repository root. */
export const CONTRACT_HEADER_PATH = "packages/cuda/include/switchyard_contract.h";

const str = (s: string) => JSON.stringify(s);

/** `typedef enum name { A = 0, /* meaning *\/ ... } name;` with one enumerator a line. */
function cEnum(name: string, doc: string, items: [string, number, string?][]): string[] {
  const width = Math.max(...items.map(([id, v]) => `${id} = ${v},`.length));
  return [
    `/* ${doc} */`,
    `typedef enum ${name} {`,
    ...items.map(([id, v, meaning], i) => {
      const text = `${id} = ${v}${i < items.length - 1 ? "," : ""}`;
      return meaning ? `  ${text.padEnd(width)} /* ${meaning} */` : `  ${text}`;
    }),
    `} ${name};`,
    "",
  ];
}

/** `#define NAME(X) X(...) X(...)` with one entry a line. */
function xMacro(name: string, doc: string, entries: string[]): string[] {
  return [
    `/* ${doc} */`,
    `#define ${name}(X) \\`,
    ...entries.map((e, i) => `  X(${e})${i < entries.length - 1 ? " \\" : ""}`),
    "",
  ];
}

const codeEntries = (codes: readonly ContractCode[]) =>
  codes.map((c) => `${c.value}, ${constantName(c.name)}, ${str(c.label)}, ${str(c.meaning)}`);

/** The C header of the contract: the public enums, and X-macro lists for the tables of names. */
export function renderContractHeader(): string {
  const regionDtypes = Object.entries(REGION_DTYPE_CODES);
  requireDense(
    regionDtypes.map(([, v]) => v),
    "REGION_DTYPE_CODES",
  );
  const lines = [
    "/*",
    ...generatedNotice(
      "switchyard_contract.h: the protocol's names and codes (statuses, wire codes, regions, parameters).",
    ).map((l) => ` * ${l}`),
    " *",
    " * Included by switchyard_cuda.h and switchyard_layout.h. The X-macro lists (SY_CONTRACT_*) let C",
    ' * and C++ sources build their tables from it: X(value, ID, "label", "meaning") for codes,',
    ' * X(index, ID, "name") for regions and scalar parameters, X(value, NAME, "meaning") for statuses.',
    " */",
    "#ifndef SWITCHYARD_CONTRACT_H_",
    "#define SWITCHYARD_CONTRACT_H_",
    "",
    `/* Values of the parameter block (core's PARAM_NAMES.length). */`,
    `#define SY_PARAM_COUNT ${PARAM_NAMES.length}`,
    "",
    ...cEnum(
      "sy_status",
      "What every function of the C ABI returns (sy_status_name gives the enumerator's name).",
      STATUS_CODES.map((s) => [s.label, s.value, s.value === 0 ? undefined : s.meaning]),
    ),
    ...cEnum(
      "sy_dtype",
      "Element types on the wire (core's Dtype).",
      Object.entries(DTYPE_CODES).map(([k, v]) => [`SY_DTYPE_${constantName(k)}`, v]),
    ),
    ...cEnum(
      "sy_layout_kind",
      "Layouts (core's LayoutKind): masked (low latency) and contiguous (high throughput).",
      Object.entries(LAYOUT_KIND_CODES).map(([k, v]) => [`SY_LAYOUT_${constantName(k)}`, v]),
    ),
    ...cEnum(
      "sy_scale_format",
      "fp8 block-scale formats (core's ScaleFormat): pow2 and ue8m0 store 2^s in fp32, amax stores amax / 448.",
      Object.entries(SCALE_FORMAT_CODES).map(([k, v]) => [`SY_SCALE_${constantName(k)}`, v]),
    ),
    ...cEnum(
      "sy_combine_weights",
      "Where combine applies the router weights (core's CombineWeights): at the expert rank, or at home.",
      Object.entries(COMBINE_WEIGHTS_CODES).map(([k, v]) => [`SY_COMBINE_WEIGHTS_${constantName(k)}`, v]),
    ),
    ...cEnum(
      "sy_region_dtype",
      "Element types of regions (core's RegionDtype).",
      regionDtypes.map(([k, v]) => [`SY_REGION_${constantName(k)}`, v]),
    ),
    ...cEnum("sy_region_index", "Regions in the fixed order of the parameter block (core's REGION_NAMES).", [
      ...REGION_NAMES.map((r, i): [string, number] => [`SY_REGION_${constantName(r)}`, i]),
      ["SY_REGION_COUNT", REGION_NAMES.length],
    ]),
    ...cEnum(
      "sy_stage",
      "sy_error_info.stage: the stage whose wait or check failed.",
      STAGE_CODES.map((c) => [`SY_STAGE_${constantName(c.name)}`, c.value, c.meaning]),
    ),
    ...cEnum("sy_error_code", "sy_error_info.code: what a stage kernel recorded (0: nothing).", [
      ["SY_CODE_NONE", 0],
      ...DEVICE_ERROR_CODES.map((c): [string, number, string] => [
        `SY_CODE_${constantName(c.name)}`,
        c.value,
        c.meaning,
      ]),
    ]),
    ...cEnum(
      "sy_record_fault",
      "sy_error_info.detail1 of SY_CODE_BAD_RECORD: what was wrong with the route record.",
      RECORD_FAULT_CODES.map((c) => [`SY_FAULT_${constantName(c.name)}`, c.value, c.meaning]),
    ),
    ...xMacro(
      "SY_CONTRACT_STATUSES",
      "X(value, NAME, meaning) for every sy_status.",
      STATUS_CODES.map((s) => `${s.value}, ${s.label}, ${str(s.meaning)}`),
    ),
    ...xMacro(
      "SY_CONTRACT_REGIONS",
      "X(index, ID, name) for every region, in parameter-block order (core's REGION_NAMES).",
      REGION_NAMES.map((r, i) => `${i}, ${constantName(r)}, ${str(r)}`),
    ),
    ...xMacro(
      "SY_CONTRACT_SCALAR_PARAMS",
      "X(index, ID, name) for every scalar parameter, in block order (core's SCALAR_PARAMS).",
      SCALAR_PARAMS.map((p, i) => `${i}, ${constantName(p)}, ${str(p)}`),
    ),
    ...xMacro(
      "SY_CONTRACT_REGION_DTYPES",
      "X(value, ID, name) for every region element type.",
      regionDtypes.map(([k, v]) => `${v}, ${constantName(k)}, ${str(k)}`),
    ),
    ...xMacro(
      "SY_CONTRACT_STAGES",
      "X(value, ID, label, meaning) for every stage.",
      codeEntries(STAGE_CODES),
    ),
    ...xMacro(
      "SY_CONTRACT_ERROR_CODES",
      "X(value, ID, label, meaning) for every code a stage kernel records.",
      codeEntries(DEVICE_ERROR_CODES),
    ),
    ...xMacro(
      "SY_CONTRACT_RECORD_FAULTS",
      "X(value, ID, label, meaning) for every route record fault (label: the message's words).",
      codeEntries(RECORD_FAULT_CODES),
    ),
    "/* The parameter names in block order, comma-separated (core's PARAM_NAMES). */",
    "#define SY_CONTRACT_PARAM_NAMES \\",
    ...chunkCsv(PARAM_NAMES).map((c, i, all) => `  ${str(c)}${i < all.length - 1 ? " \\" : ""}`),
    "",
    "#endif /* SWITCHYARD_CONTRACT_H_ */",
    "",
  ];
  return lines.join("\n");
}

/** The comma-separated names in pieces of at most about 90 characters (adjacent C strings). */
function chunkCsv(names: readonly string[]): string[] {
  const csv = names.join(",");
  const out: string[] = [];
  let rest = csv;
  while (rest.length > 90) {
    const cut = rest.lastIndexOf(",", 90) + 1;
    out.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  out.push(rest);
  return out;
}
