import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";

const root = join(import.meta.dirname, "..", "..", "..");
/** Where the blocks are written: inside this package, so `@switchyard/*` resolve as a user's would. */
const scratch = join(import.meta.dirname, ".docs");

/** The Markdown a newcomer reads: the root README, docs/, every package's and template's README. */
async function markdownFiles(): Promise<string[]> {
  const files = [join(root, "README.md")];
  for (const dir of ["docs"]) {
    for (const f of await readdir(join(root, dir))) if (f.endsWith(".md")) files.push(join(root, dir, f));
  }
  for (const dir of ["packages", "templates"]) {
    for (const sub of await readdir(join(root, dir))) files.push(join(root, dir, sub, "README.md"));
  }
  const exists = await Promise.all(
    files.map((f) =>
      readFile(f).then(
        () => true,
        () => false,
      ),
    ),
  );
  return files.filter((_, i) => exists[i]);
}

/** The ```ts blocks whose info string says `runnable`, with where they start. */
function runnableBlocks(text: string): { line: number; code: string }[] {
  const blocks: { line: number; code: string }[] = [];
  const re = /^```ts[ \t]+runnable[ \t]*\n([\s\S]*?)^```[ \t]*$/gm;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    blocks.push({ line: text.slice(0, m.index).split("\n").length, code: m[1] });
  }
  return blocks;
}

const files = await markdownFiles();
const found = await Promise.all(
  files.map(async (file) => ({ file, blocks: runnableBlocks(await readFile(file, "utf8")) })),
);

afterAll(() => rm(scratch, { recursive: true, force: true }));

describe("runnable code examples in the docs", () => {
  it("finds the README's API example", () => {
    const readme = found.find((f) => f.file === join(root, "README.md"));
    expect(readme?.blocks.length).toBeGreaterThanOrEqual(1);
  });

  for (const { file, blocks } of found) {
    for (const { line, code } of blocks) {
      const where = `${relative(root, file)}:${line}`;
      it(`${where} runs as written`, async () => {
        await mkdir(scratch, { recursive: true });
        const target = join(scratch, `${where.replace(/[^\w]+/g, "_")}.ts`);
        await writeFile(target, code);
        const log = vi.spyOn(console, "log").mockImplementation(() => {});
        try {
          await import(target);
          expect(log).toHaveBeenCalled();
        } finally {
          log.mockRestore();
        }
      }, 60_000);
    }
  }
});
