export * as bounds from "./bounds.js";
export { CapabilitiesError, type CapabilityProblem, validateCapabilities } from "./capabilities.js";
export { type DemoOutcome, demoInputs, runDemoStep } from "./demo/step.js";
export { formatFailure, formatTable } from "./format.js";
export {
  type FuzzCounts,
  type FuzzOptions,
  type FuzzReport,
  formatFuzzReport,
  fuzzBackend,
  fuzzCoreApi,
} from "./fuzz/index.js";
export { PROPERTIES, PROPERTY_NAMES } from "./properties/index.js";
export { expectedTraffic } from "./properties/stats.js";
export type { ConformanceProperty, PropertyContext } from "./property.js";
export { BackendLoadError, resolveBackend } from "./resolve.js";
export { DEEP_RUNS, QUICK_RUNS, REPORT_VERSION, replayFlags, runConformance } from "./run.js";
export { selectProperties } from "./select.js";
export type {
  ConformanceOptions,
  ConformanceReport,
  InterruptedProperty,
  Interruption,
  ProgressEvent,
  PropertyResult,
  PropertyStatus,
} from "./types.js";
