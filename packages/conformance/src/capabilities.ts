import {
  type Capabilities,
  COMBINE_WEIGHTS,
  DTYPES,
  describeValue,
  LAYOUTS,
  SCALE_FORMATS,
  SwitchyardError,
} from "@switchyard/core";

/** One field of a backend's `capabilities` that is missing or holds a value the suite cannot use. */
export interface CapabilityProblem {
  /** The field, e.g. `maxRanks`. */
  field: string;
  /** What it holds, as text (`undefined` when missing). */
  got: string;
  /** What is allowed. */
  allowed: string;
}

/** A backend declares capabilities the suite cannot use. `problems` lists every bad field. */
export class CapabilitiesError extends SwitchyardError {
  override name = "CapabilitiesError";
  constructor(
    readonly backend: string,
    readonly problems: readonly CapabilityProblem[],
  ) {
    super(
      `backend ${backend} declares bad capabilities; fix these fields of its \`capabilities\`:\n` +
        problems.map((p) => `  ${p.field} = ${p.got}: ${p.allowed}`).join("\n"),
    );
  }
}

type Rule = (value: unknown) => string | null;

const list =
  (choices: readonly string[]): Rule =>
  (v) => {
    const allowed = `a non-empty array of distinct values from ${choices.map((c) => `"${c}"`).join(", ")}`;
    if (!Array.isArray(v) || v.length === 0) return allowed;
    if (v.some((x) => !choices.includes(x)) || new Set(v).size !== v.length) return allowed;
    return null;
  };

const count =
  (min: number, max: number): Rule =>
  (v) =>
    typeof v === "number" && Number.isInteger(v) && v >= min && v <= max
      ? null
      : `an integer in [${min}, ${max}]`;

const flag: Rule = (v) => (typeof v === "boolean" ? null : "true or false");

/** Every field of `Capabilities`, its rule, and whether it may be left out. */
const FIELDS: readonly { field: keyof Capabilities; rule: Rule; optional?: boolean }[] = [
  { field: "layouts", rule: list(LAYOUTS) },
  { field: "inputDtypes", rule: list(DTYPES) },
  { field: "dispatchDtypes", rule: list(DTYPES) },
  // 0: no ranks can run here (no GPU visible); every property then skips, saying so.
  { field: "maxRanks", rule: count(0, 4096) },
  { field: "maxHidden", rule: count(1, 1 << 20) },
  { field: "maxTopK", rule: count(1, 4096) },
  { field: "hiddenMultiple", rule: count(1, 1 << 20) },
  { field: "dpGroups", rule: flag },
  { field: "deterministicRowOrder", rule: flag },
  { field: "stats", rule: flag, optional: true },
  { field: "scaleFormats", rule: list(SCALE_FORMATS), optional: true },
  { field: "combineWeights", rule: list(COMBINE_WEIGHTS), optional: true },
];

/**
 * Checks a backend's `capabilities` before the suite draws a single config from them, and throws
 * `CapabilitiesError` naming every field that is missing or out of range and what it may hold.
 * (Without it a bad declaration surfaces as failures of the generators, far from the cause.)
 */
export function validateCapabilities(backendName: string, caps: unknown): Capabilities {
  if (caps === null || typeof caps !== "object" || Array.isArray(caps)) {
    throw new CapabilitiesError(backendName, [
      {
        field: "capabilities",
        got: describeValue(caps),
        allowed: `an object with ${FIELDS.map((f) => f.field).join(", ")}`,
      },
    ]);
  }
  const record = caps as Record<string, unknown>;
  const problems: CapabilityProblem[] = [];
  for (const { field, rule, optional } of FIELDS) {
    const value = record[field];
    if (value === undefined && optional) continue;
    const allowed = rule(value);
    if (allowed !== null) problems.push({ field, got: describeValue(value), allowed });
  }
  const c = caps as Capabilities;
  if (problems.length === 0 && c.hiddenMultiple > c.maxHidden) {
    problems.push({
      field: "hiddenMultiple",
      got: describeValue(c.hiddenMultiple),
      allowed: `at most maxHidden (${c.maxHidden}), or no hidden size fits`,
    });
  }
  if (problems.length > 0) throw new CapabilitiesError(backendName, problems);
  return c;
}
