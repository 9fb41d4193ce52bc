#!/usr/bin/env node
// The `switchyard` command. A committed shim, so npm links the command at install time, before
// the TypeScript build has written dist/.
import("../dist/cli/main.js").catch((error) => {
  if (error?.code === "ERR_MODULE_NOT_FOUND") {
    console.error(
      "switchyard: the packages are not built yet; run `npx turbo run build` (or bash scripts/setup.sh) first",
    );
    process.exit(2);
  }
  throw error;
});
