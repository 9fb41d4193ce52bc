/**
 * The config rules as the documentation states them (core's config.ts doc comments), written out
 * again here so the fuzzer does not trust the code it tests. `configProblems` returns every field
 * that breaks a rule (empty: valid); `defineConfig` must accept exactly the valid configs and name
 * one of these fields when it refuses.
 */
export const CONFIG_FIELDS = [
  "ranks",
  "dpSize",
  "experts",
  "topK",
  "hidden",
  "maxTokensPerRank",
  "inputDtype",
  "dispatchDtype",
  "layout",
  "expertAlignment",
  "scaleFormat",
  "combineWeights",
] as const;

/** The documented defaults of the optional fields. */
export const DOCUMENTED_DEFAULTS = {
  dpSize: 1,
  inputDtype: "bf16",
  dispatchDtype: "bf16",
  layout: "masked",
  expertAlignment: 1,
} as const;

const DTYPES = ["bf16", "fp8-e4m3"];
const LAYOUTS = ["masked", "contiguous"];
const SCALE_FORMATS = ["pow2", "amax", "ue8m0"];
const COMBINE_WEIGHTS = ["expert", "home"];

function isInt(v: unknown, max: number): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= max;
}

/** What `defineConfig(input)` validates: the input with the defaults filled in (object spread). */
export function withDefaults(input: unknown): Record<string, unknown> {
  return { ...DOCUMENTED_DEFAULTS, ...(input as object) };
}

/** The fields of a (defaults-filled) config that break a rule; empty when the config is valid. */
export function configProblems(c: Record<string, unknown>): Set<string> {
  const bad = new Set<string>();
  const ranksOk = isInt(c.ranks, 4096);
  const expertsOk = isInt(c.experts, 2 ** 20);
  const hiddenOk = isInt(c.hidden, 2 ** 20);
  if (!ranksOk) bad.add("ranks");
  if (!isInt(c.dpSize, ranksOk ? (c.ranks as number) : 4096)) bad.add("dpSize");
  if (!expertsOk) bad.add("experts");
  if (!isInt(c.topK, expertsOk ? (c.experts as number) : 2 ** 20)) bad.add("topK");
  if (!hiddenOk) bad.add("hidden");
  if (!isInt(c.maxTokensPerRank, 2 ** 21 - 2)) bad.add("maxTokensPerRank");
  if (!isInt(c.expertAlignment, 2 ** 16)) bad.add("expertAlignment");
  if (ranksOk && isInt(c.dpSize, 4096) && (c.ranks as number) % (c.dpSize as number) !== 0) bad.add("dpSize");
  if (ranksOk && expertsOk && (c.experts as number) % (c.ranks as number) !== 0) bad.add("experts");
  const inOk = DTYPES.includes(c.inputDtype as string);
  const outOk = DTYPES.includes(c.dispatchDtype as string);
  if (!inOk) bad.add("inputDtype");
  if (!outOk) bad.add("dispatchDtype");
  if (inOk && outOk && c.inputDtype === "fp8-e4m3" && c.dispatchDtype !== "fp8-e4m3")
    bad.add("dispatchDtype");
  if (outOk && hiddenOk && c.dispatchDtype === "fp8-e4m3" && (c.hidden as number) % 128 !== 0)
    bad.add("hidden");
  if (!LAYOUTS.includes(c.layout as string)) bad.add("layout");
  // scaleFormat: optional; one of the formats, and only with fp8-e4m3 dispatch.
  if (c.scaleFormat !== undefined) {
    if (!SCALE_FORMATS.includes(c.scaleFormat as string)) bad.add("scaleFormat");
    else if (outOk && c.dispatchDtype !== "fp8-e4m3") bad.add("scaleFormat");
  }
  // combineWeights: optional; expert or home, and home only with the masked layout.
  if (c.combineWeights !== undefined) {
    if (!COMBINE_WEIGHTS.includes(c.combineWeights as string)) bad.add("combineWeights");
    else if (c.combineWeights === "home" && c.layout !== "masked") bad.add("combineWeights");
  }
  for (const key of Object.keys(c)) if (!(CONFIG_FIELDS as readonly string[]).includes(key)) bad.add(key);
  return bad;
}
