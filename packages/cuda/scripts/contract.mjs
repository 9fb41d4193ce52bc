// Writes the files generated from core's contract (packages/core/src/contract, CONTRACT_FILES): the
// C header include/switchyard_contract.h, the Python module python/switchyard_cuda/_contract.py and
// the C layout's table of regions src/native/layout/layout_regions.gen.h.
// Run after building core: `npx turbo run build --filter=@switchyard/core && npm run contract -w @switchyard/cuda`.
// `--check` writes nothing and exits 1 naming every stale file.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CONTRACT_FILES } from "@switchyard/core";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const files = CONTRACT_FILES.map((f) => [f.path, f.render()]);
const check = process.argv.includes("--check");
const stale = [];
for (const [path, text] of files) {
  const full = join(root, path);
  let old = null;
  try {
    old = readFileSync(full, "utf8");
  } catch {}
  if (old === text) continue;
  stale.push(path);
  if (!check) writeFileSync(full, text);
}
if (check && stale.length > 0) {
  console.error(`contract: stale (run \`npm run contract -w @switchyard/cuda\`): ${stale.join(", ")}`);
  process.exit(1);
}
console.log(
  `contract: ${check ? "checked" : "wrote"} ${files.length - (check ? 0 : files.length - stale.length)} of ${files.length} files`,
);
