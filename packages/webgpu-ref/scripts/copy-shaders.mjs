// Copies the WGSL stage files next to the compiled modules (dist/shaders), where src/shaders.ts loads them.
import { cpSync, mkdirSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const from = join(root, "src", "shaders");
const to = join(root, "dist", "shaders");
mkdirSync(to, { recursive: true });
const files = readdirSync(from).filter((f) => f.endsWith(".wgsl"));
for (const f of files) cpSync(join(from, f), join(to, f));
console.log(`copy-shaders: ${files.length} WGSL files -> dist/shaders`);
