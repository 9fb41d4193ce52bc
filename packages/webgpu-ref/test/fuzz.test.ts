import { describeFuzz } from "@switchyard/conformance/vitest";
import { webgpuBackend } from "../src/index.js";

// The session fuzzer of @switchyard/conformance (bad inputs, ranks, expert outputs, phases, configs,
// destroyed sessions, each step checked against core's reference); small worlds keep it fast on lavapipe.
describeFuzz(webgpuBackend, { numRuns: 120, maxOps: 60, maxRanks: 4, maxHidden: 160 });
