import { CONTRACT_HEADER_PATH, renderContractHeader } from "./renderC.js";
import { LAYOUT_REGIONS_PATH, renderLayoutRegions } from "./renderLayoutC.js";
import { CONTRACT_PYTHON_PATH, renderContractPython } from "./renderPython.js";

/** One file generated from the contract: where it goes (from the repository root) and its text. */
export interface ContractFile {
  readonly path: string;
  readonly render: () => string;
}

/**
 * Every file generated from core's contract. `npm run contract -w @switchyard/cuda` writes them
 * all, and @switchyard/cuda's test/contract.test.ts fails while any is stale.
 */
export const CONTRACT_FILES: readonly ContractFile[] = Object.freeze([
  { path: CONTRACT_HEADER_PATH, render: renderContractHeader },
  { path: CONTRACT_PYTHON_PATH, render: renderContractPython },
  { path: LAYOUT_REGIONS_PATH, render: renderLayoutRegions },
]);
