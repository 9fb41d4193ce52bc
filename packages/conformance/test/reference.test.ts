import { referenceBackend } from "@switchyard/core";
import { describeConformance } from "../src/vitest.js";

describeConformance(referenceBackend);
