import { describeConformance } from "@switchyard/conformance/vitest";
import { webgpuBackend } from "../src/index.js";

describeConformance(webgpuBackend);
