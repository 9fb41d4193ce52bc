// The whole suite against this backend, one vitest test per property. SWITCHYARD_ONLY (comma-
// separated names, prefixes or globs) runs a subset; SWITCHYARD_SEED replays a seed.
import { describeConformance } from "@switchyard/conformance/vitest";
import { backend } from "../src/index.js";

const only = process.env.SWITCHYARD_ONLY;
describeConformance(backend, only ? { only } : {});
