import { REGION_DTYPE_BYTES } from "../layout/region.js";
import {
  extentFactors,
  REGION_WHEN_FIELDS,
  type RegionCondition,
  type RegionDescription,
  type RegionForm,
  type RegionWhen,
} from "../layout/regionDescription.js";
import { REGION_TABLE } from "../layout/regionTable.js";
import { LAYOUT_SYMBOLS, META_WORDS } from "../layout/symbols.js";
import { constantName } from "./entry.js";
import { generatedNotice, requireDense } from "./generated.js";
import { DTYPE_CODES, REGION_DTYPE_CODES } from "./values.js";

/** Where the C table of regions is written, relative to the repository root. */
export const LAYOUT_REGIONS_PATH = "packages/cuda/src/native/layout/layout_regions.gen.h";

/** Each condition field: the sy_config field it reads, the prefix of its codes' C names, their C type. */
const WHEN_C: { readonly [F in keyof RegionWhen]-?: { field: string; prefix: string; type: string } } = {
  layout: { field: "layout", prefix: "SY_LAYOUT_", type: "sy_layout_kind" },
  combineWeights: { field: "combine_weights", prefix: "SY_COMBINE_WEIGHTS_", type: "sy_combine_weights" },
  dispatchDtype: { field: "dispatch_dtype", prefix: "SY_DTYPE_", type: "sy_dtype" },
};

const symbolId = (s: string) => `SY_SYM_${constantName(s)}`;

/** `{mask, mask, ...}` in REGION_WHEN_FIELDS order. */
function cWhen(condition: RegionCondition): string {
  if (condition === true) return "SY_WHEN_ALWAYS";
  if (condition === false) return "SY_WHEN_NEVER";
  const masks = REGION_WHEN_FIELDS.map((f) => {
    const v = condition[f];
    const mask = v === undefined ? "SY_WHEN_ANY" : `SY_WHEN_BIT(${WHEN_C[f].prefix}${constantName(v)})`;
    return `.${WHEN_C[f].field} = ${mask}`;
  });
  return `{${masks.join(", ")}}`;
}

/** A comment's text, refused when it would end the comment. */
function comment(text: string): string {
  if (text.includes("*/")) throw new RangeError(`renderLayoutRegions: "${text}" would end a C comment`);
  return `/* ${text} */`;
}

function cForm(form: RegionForm, factors: number): string[] {
  const extents = form.shape.map((e) => {
    const f = extentFactors(e).map(symbolId);
    while (f.length < factors) f.push("SY_SYM_NONE");
    return `{${f.join(", ")}}`;
  });
  return [
    `      ${comment(`[${form.shape.join(", ")}]: ${form.doc}`)}`,
    "      {",
    `        .when = ${cWhen(form.when ?? true)},`,
    `        .dims = ${form.shape.length},`,
    `        .shape = {${extents.join(", ")}},`,
    `        .axes = {${form.axes.map((a) => JSON.stringify(a)).join(", ")}},`,
    "      },",
  ];
}

function cRule(region: RegionDescription, factors: number): string[] {
  const dtype =
    region.dtype === "dispatchDtype" ? "SY_REGION_DTYPE_DISPATCH" : `SY_REGION_${constantName(region.dtype)}`;
  return [
    `  ${comment(region.name)}`,
    "  {",
    `    .index = SY_REGION_${constantName(region.name)},`,
    `    .dtype = ${dtype},`,
    `    .used = ${cWhen(region.usedWhen ?? true)},`,
    `    .symmetric = ${cWhen(region.symmetric)},`,
    `    .empty = ${cWhen(region.emptyWhen ?? false)},`,
    `    .form_count = ${region.forms.length},`,
    "    .forms = {",
    ...region.forms.flatMap((f) => cForm(f, factors)),
    "    },",
    "  },",
  ];
}

/** Throws a RangeError naming the region when a form's shape and axes differ in length. */
function checkForms(table: readonly RegionDescription[]): void {
  for (const r of table) {
    for (const f of r.forms) {
      if (f.shape.length !== f.axes.length || f.shape.length === 0) {
        throw new RangeError(
          `renderLayoutRegions: region ${r.name} has a form with shape [${f.shape.join(", ")}] and axes [${f.axes.join(", ")}]; give one axis per extent`,
        );
      }
    }
  }
}

/** The C table of every region (core's REGION_TABLE), which the C layout (layout.c) places from. */
export function renderLayoutRegions(): string {
  const table: readonly RegionDescription[] = REGION_TABLE;
  checkForms(table);
  const regionDtypes = Object.entries(REGION_DTYPE_CODES);
  requireDense(
    regionDtypes.map(([, v]) => v),
    "REGION_DTYPE_CODES",
  );
  const dtypes = Object.entries(DTYPE_CODES);
  requireDense(
    dtypes.map(([, v]) => v),
    "DTYPE_CODES",
  );
  const symbols = Object.entries(LAYOUT_SYMBOLS);
  const forms = table.flatMap((r) => r.forms);
  const factors = Math.max(...forms.flatMap((f) => f.shape.map((e) => extentFactors(e).length)));
  const dims = Math.max(...forms.map((f) => f.shape.length));
  const maxForms = Math.max(...table.map((r) => r.forms.length));
  const width = Math.max(...symbols.map(([s], i) => `${symbolId(s)} = ${i},`.length));
  const whenWidth = Math.max(...REGION_WHEN_FIELDS.map((f) => `uint32_t ${WHEN_C[f].field};`.length));
  const lines = [
    "/*",
    ...generatedNotice(
      "layout_regions.gen.h: every region of the layout as data (core's REGION_TABLE), in placement order.",
    ).map((l) => ` * ${l}`),
    " *",
    " * Included by layout.c alone, which places the regions from it and keeps the overflow checks.",
    " * An extent is the product of its symbols (SY_SYM_NONE pads); a condition holds when every",
    " * config field has one of the codes its mask allows (bit `code`; SY_WHEN_ANY allows every code).",
    " */",
    "#ifndef SWITCHYARD_LAYOUT_REGIONS_GEN_H_",
    "#define SWITCHYARD_LAYOUT_REGIONS_GEN_H_",
    "",
    "#include <stdint.h>",
    "",
    '#include "switchyard_layout.h"',
    "",
    "/* The symbols shapes are written in (core's LAYOUT_SYMBOLS); layout.c's symbol_value gives their values. */",
    "typedef enum sy_layout_symbol {",
    "  SY_SYM_NONE = -1,",
    ...symbols.map(([s, doc], i) => `  ${`${symbolId(s)} = ${i},`.padEnd(width)} ${comment(doc)}`),
    `  SY_SYM_COUNT = ${symbols.length}`,
    "} sy_layout_symbol;",
    "",
    "/* Core's META_WORDS: metadata words per delivered row. */",
    `#define SY_LAYOUT_META_WORDS ${META_WORDS}`,
    "/* The most symbols in one extent, extents in one shape, forms of one region. */",
    `#define SY_EXTENT_FACTORS ${factors}`,
    `#define SY_REGION_MAX_DIMS ${dims}`,
    `#define SY_REGION_MAX_FORMS ${maxForms}`,
    `_Static_assert(SY_REGION_MAX_DIMS <= SY_LAYOUT_MAX_DIMS, "a region's shape fits sy_region.shape");`,
    "",
    "/* A condition on the config: for each field, the codes it may have (bit `code` set). */",
    "typedef struct sy_region_when {",
    ...REGION_WHEN_FIELDS.map(
      (f) => `  ${`uint32_t ${WHEN_C[f].field};`.padEnd(whenWidth)} /* ${WHEN_C[f].type} codes */`,
    ),
    "} sy_region_when;",
    "#define SY_WHEN_ANY 0xffffffffu",
    "#define SY_WHEN_BIT(code) (1u << (code))",
    `#define SY_WHEN_ALWAYS {${REGION_WHEN_FIELDS.map(() => "SY_WHEN_ANY").join(", ")}}`,
    `#define SY_WHEN_NEVER {${REGION_WHEN_FIELDS.map(() => "0u").join(", ")}}`,
    "",
    "/* Whether `mask` allows `code`. */",
    "static inline int sy_when_allows_(uint32_t mask, int32_t code) {",
    "  return code >= 0 && code < 32 && ((mask >> code) & 1u) != 0;",
    "}",
    "",
    "/* Whether condition `w` holds for config `c`. */",
    "static inline int sy_region_when_holds_(const sy_region_when* w, const sy_config* c) {",
    `  return ${REGION_WHEN_FIELDS.map((f) => `sy_when_allows_(w->${WHEN_C[f].field}, c->${WHEN_C[f].field})`).join(" &&\n         ")};`,
    "}",
    "",
    "/* One form of a region: where it applies, its extents (products of symbols), one axis name each. */",
    "typedef struct sy_region_form {",
    "  sy_region_when when;",
    "  int32_t dims;",
    "  int8_t shape[SY_REGION_MAX_DIMS][SY_EXTENT_FACTORS];",
    "  const char* axes[SY_REGION_MAX_DIMS];",
    "} sy_region_form;",
    "",
    "/* The dtype of a region that holds the config's dispatch dtype. */",
    "#define SY_REGION_DTYPE_DISPATCH (-1)",
    "",
    "/* One region (core's RegionDescription). */",
    "typedef struct sy_region_rule {",
    "  int32_t index;            /* sy_region_index */",
    "  int32_t dtype;            /* sy_region_dtype, or SY_REGION_DTYPE_DISPATCH */",
    "  sy_region_when used;      /* placed where this holds, reported unused elsewhere */",
    "  sy_region_when symmetric; /* in the symmetric heap where this holds, else local */",
    "  sy_region_when empty;     /* placed with shape [0], its axes kept, where this holds */",
    "  int32_t form_count;",
    "  sy_region_form forms[SY_REGION_MAX_FORMS]; /* the first whose `when` holds applies */",
    "} sy_region_rule;",
    "",
    "/* Element bytes of each sy_region_dtype (core's REGION_DTYPE_BYTES). */",
    `static const uint8_t sy_region_dtype_bytes_[${regionDtypes.length}] = {${regionDtypes
      .map(([k]) => REGION_DTYPE_BYTES[k as keyof typeof REGION_DTYPE_BYTES])
      .join(", ")}};`,
    "",
    "/* The sy_region_dtype of each sy_dtype (for SY_REGION_DTYPE_DISPATCH). */",
    `static const int32_t sy_region_dtype_of_dtype_[${dtypes.length}] = {${dtypes
      .map(([k]) => `SY_REGION_${constantName(k)}`)
      .join(", ")}};`,
    "",
    "/* Every region, in placement order (core's REGION_TABLE). */",
    "static const sy_region_rule sy_region_rules_[SY_REGION_COUNT] = {",
    ...table.flatMap((r) => cRule(r, factors)),
    "};",
    "",
    "#endif /* SWITCHYARD_LAYOUT_REGIONS_GEN_H_ */",
    "",
  ];
  return lines.join("\n");
}
