import { demoInputs, runDemoStep } from "@switchyard/conformance";
import { defineConfig, referenceBackend } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { charWidth, FONT, renderDemoSvg } from "../src/demo/picture.js";

interface Box {
  text: string;
  x0: number;
  x1: number;
  y0: number;
  y1: number;
}

/** Every unrotated label's box, from its position, anchor, class and a generous character width. */
function labels(svg: string): Box[] {
  const re = /<text x="([\d.]+)" y="([\d.]+)" class="(\w)" text-anchor="(\w+)"([^>]*)>([^<]*)<\/text>/g;
  const boxes: Box[] = [];
  for (const m of svg.matchAll(re)) {
    if (m[5].includes("rotate")) continue;
    const cls = m[3] as keyof typeof FONT;
    const w = m[6].length * charWidth(cls);
    const x = Number(m[1]);
    const x0 = m[4] === "middle" ? x - w / 2 : m[4] === "end" ? x - w : x;
    const y = Number(m[2]);
    boxes.push({ text: m[6], x0, x1: x0 + w, y0: y - FONT[cls] * 0.8, y1: y + FONT[cls] * 0.2 });
  }
  return boxes;
}

function overlaps(a: Box, b: Box): boolean {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

async function picture(ranks: number, experts: number): Promise<string> {
  const config = defineConfig({ ranks, experts, topK: 4, hidden: 128, maxTokensPerRank: 32 });
  const outcome = await runDemoStep(referenceBackend, config, demoInputs(config, 32, 1));
  return renderDemoSvg(config, outcome, "reference");
}

describe("the demo's picture", () => {
  for (const [ranks, experts] of [
    [8, 8],
    [8, 32],
    [8, 64],
    [4, 32],
    [16, 256],
  ]) {
    it(`${ranks} ranks, ${experts} experts: labels inside the picture, none overlapping`, async () => {
      const svg = await picture(ranks, experts);
      const width = Number(svg.match(/width="(\d+)"/)![1]);
      const boxes = labels(svg);
      expect(boxes.length).toBeGreaterThan(20);
      for (const b of boxes) {
        expect(b.x0, b.text).toBeGreaterThanOrEqual(0);
        expect(b.x1, b.text).toBeLessThanOrEqual(width);
      }
      const clashes: string[] = [];
      boxes.forEach((a, i) => {
        for (const b of boxes.slice(i + 1)) if (overlaps(a, b)) clashes.push(`"${a.text}" / "${b.text}"`);
      });
      expect(clashes).toEqual([]);
    });
  }

  it("has axis values, axis names and a colour legend", async () => {
    const svg = await picture(8, 32);
    const texts = labels(svg).map((b) => b.text);
    expect(texts).toContain("rows per cell:");
    expect(svg).toContain(">source rank</text>");
    expect(texts).toContain("rank");
    expect(texts).toContain("expert");
    for (let r = 0; r < 8; r++) expect(texts.filter((t) => t === `rank ${r}`).length).toBe(2); // rows and columns
    expect(texts).toContain("0"); // value axes start at 0
    expect(svg.match(/<rect x="[\d.]+" y="[\d.]+" width="22" height="16"/g)).toHaveLength(5);
  });
});
