#!/usr/bin/env node
// The project's one version. VERSION at the repository root holds it, alone on one line (x.y.z):
// a plain file every toolchain reads without a parser of another's format. CMake reads it
// (packages/cuda/CMakeLists.txt: the project's VERSION, the library's file version and sy_version's
// string), the Python package reads it at build time (pyproject.toml: scikit-build-core's regex
// metadata provider; `switchyard_cuda.__version__` from it), and npm, which must have the number
// inside every package.json, gets it written there by this script.
//
//   node scripts/version.mjs            checks every copy and every reader; names each that disagrees (exit 1)
//   node scripts/version.mjs --write    writes VERSION into every package.json, the internal
//                                       @switchyard/* ranges, the backend template and docs/depending.md;
//                                       then run `npm install --no-audit --no-fund` for the lockfile
//   --root DIR                          another checkout (the tests point it at a copy)
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const SEMVER = /^\d+\.\d+\.\d+$/;
const DEP_FIELDS = ["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"];

function parseArgs(argv) {
  const opts = { root: join(import.meta.dirname, ".."), write: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--write") opts.write = true;
    else if (argv[i] === "--root" && argv[i + 1]) opts.root = resolve(argv[++i]);
    else throw new Error(`version: unknown argument ${argv[i]} (the arguments are --write and --root DIR)`);
  }
  return opts;
}

/** VERSION's value; throws naming the file when it is missing or not x.y.z. */
export function readVersion(root) {
  const file = join(root, "VERSION");
  if (!existsSync(file))
    throw new Error(`version: ${file} is missing: it holds the project's version (x.y.z)`);
  const value = readFileSync(file, "utf8").trim();
  if (!SEMVER.test(value)) throw new Error(`version: ${file} holds "${value}", not one x.y.z line`);
  return value;
}

/** The package.json files that carry the version: every workspace package, and the template's ranges. */
function manifests(root) {
  const pkgs = join(root, "packages");
  const out = readdirSync(pkgs)
    .map((d) => join(pkgs, d, "package.json"))
    .filter(existsSync);
  return { workspaces: out, template: join(root, "templates/backend/package.json") };
}

/** Each internal dependency range, as [field, name, range]. */
function internalRanges(json) {
  return DEP_FIELDS.flatMap((f) =>
    Object.entries(json[f] ?? {})
      .filter(([name]) => name.startsWith("@switchyard/"))
      .map(([name, range]) => [f, name, range]),
  );
}

/** Every disagreement with VERSION, one line each naming the file and what to do; empty when all agree. */
export function mismatches(root) {
  const v = readVersion(root);
  const out = [];
  const rel = (p) => relative(root, p);
  const read = (p) => (existsSync(p) ? readFileSync(p, "utf8") : null);
  const { workspaces, template } = manifests(root);
  for (const file of workspaces) {
    const json = JSON.parse(readFileSync(file, "utf8"));
    if (json.version !== v) out.push(`${rel(file)}: version ${json.version}, VERSION says ${v}`);
    for (const [f, name, range] of internalRanges(json)) {
      if (range !== "*" && range.replace(/^\^/, "") !== v) {
        out.push(`${rel(file)}: ${f}.${name} is "${range}", not ${v}, ^${v} or *`);
      }
    }
  }
  if (existsSync(template)) {
    for (const [f, name, range] of internalRanges(JSON.parse(readFileSync(template, "utf8")))) {
      if (range !== `^${v}`) out.push(`${rel(template)}: ${f}.${name} is "${range}", not ^${v}`);
    }
  }
  const lockText = read(join(root, "package-lock.json"));
  if (lockText !== null) {
    const lock = JSON.parse(lockText);
    for (const [key, entry] of Object.entries(lock.packages ?? {})) {
      if (!/^packages\/[^/]+$/.test(key)) continue;
      if (entry.version !== v) {
        out.push(`package-lock.json: ${key} is ${entry.version}, VERSION says ${v} (run npm install)`);
      }
    }
  }
  const cmake = read(join(root, "packages/cuda/CMakeLists.txt"));
  if (cmake !== null) {
    if (!/file\(STRINGS "\$\{CMAKE_CURRENT_SOURCE_DIR\}\/\.\.\/\.\.\/VERSION"/.test(cmake)) {
      out.push("packages/cuda/CMakeLists.txt: does not read ../../VERSION");
    }
    if (!/project\(switchyard_cuda VERSION \$\{SY_VERSION\}/.test(cmake)) {
      out.push(
        "packages/cuda/CMakeLists.txt: project() does not take its VERSION from SY_VERSION (read from VERSION)",
      );
    }
  }
  const capi = read(join(root, "packages/cuda/src/native/host/c_api.cc"));
  if (capi !== null && (/"switchyard-cuda \d/.test(capi) || !/"switchyard-cuda " SY_VERSION/.test(capi))) {
    out.push(
      'packages/cuda/src/native/host/c_api.cc: sy_version must be "switchyard-cuda " SY_VERSION (set by CMake)',
    );
  }
  const pyproject = read(join(root, "packages/cuda/python/pyproject.toml"));
  if (pyproject !== null) {
    const input = /\[tool\.scikit-build\.metadata\.version\][^[]*?input = "([^"]+)"/.exec(pyproject);
    if (/^version\s*=/m.test(pyproject) || !/dynamic = \[[^\]]*"version"/.test(pyproject)) {
      out.push("packages/cuda/python/pyproject.toml: the version must be dynamic (not written in [project])");
    } else if (!input || resolve(root, "packages/cuda/python", input[1]) !== join(root, "VERSION")) {
      out.push(
        "packages/cuda/python/pyproject.toml: [tool.scikit-build.metadata.version] input is not ../../../VERSION",
      );
    }
  }
  const depending = read(join(root, "docs/depending.md"));
  for (const m of depending?.matchAll(/\d+\.\d+\.\d+/g) ?? []) {
    if (m[0] !== v) out.push(`docs/depending.md: mentions ${m[0]}, VERSION says ${v}`);
  }
  return out;
}

/** Writes VERSION into every package.json (text edits: the files keep their formatting) and the docs. */
export function write(root) {
  const v = readVersion(root);
  const { workspaces, template } = manifests(root);
  const edit = (file, fn) => {
    if (!existsSync(file)) return;
    const before = readFileSync(file, "utf8");
    const after = fn(before);
    if (after !== before) {
      writeFileSync(file, after);
      console.log(`version: wrote ${v} into ${relative(root, file)}`);
    }
  };
  const ranges = (text, caret) =>
    text.replace(
      /("@switchyard\/[^"]+": ")(\^?)\d+\.\d+\.\d+"/g,
      (_, head, c) => `${head}${caret ?? c}${v}"`,
    );
  for (const file of workspaces)
    edit(file, (t) => ranges(t.replace(/"version": "[^"]*"/, `"version": "${v}"`)));
  edit(template, (t) => ranges(t, "^"));
  edit(join(root, "docs/depending.md"), (t) => t.replace(/\d+\.\d+\.\d+/g, v));
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  try {
    const opts = parseArgs(process.argv.slice(2));
    if (opts.write) {
      write(opts.root);
      console.log("version: now run `npm install --no-audit --no-fund` so package-lock.json agrees");
    }
    const bad = mismatches(opts.root);
    if (bad.length > 0) {
      console.error(`version: ${bad.length} place(s) disagree with VERSION (${readVersion(opts.root)}):`);
      for (const b of bad) console.error(`  ${b}`);
      console.error(
        "fix: edit VERSION only, then `node scripts/version.mjs --write` and `npm install --no-audit --no-fund`",
      );
      process.exit(1);
    }
    console.log(`version: ${readVersion(opts.root)} everywhere VERSION is copied or read`);
  } catch (e) {
    console.error(e instanceof Error ? e.message : String(e));
    process.exit(2);
  }
}
