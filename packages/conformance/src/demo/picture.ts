import { computeLayout, type EpConfig } from "@switchyard/core";
import type { DemoOutcome } from "./step.js";

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");

function heat(v: number, max: number): string {
  const t = max > 0 ? v / max : 0;
  const light = Math.round(97 - t * 62);
  return `hsl(212, 70%, ${light}%)`;
}

function bars(
  x: number,
  y: number,
  w: number,
  h: number,
  values: number[],
  title: string,
  label: (i: number) => string,
): string {
  const max = Math.max(1, ...values);
  const mean = values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
  const bw = w / values.length;
  const parts = [
    `<text x="${x}" y="${y - 8}" class="h">${esc(title)} (max ${max}, mean ${mean.toFixed(1)})</text>`,
  ];
  values.forEach((v, i) => {
    const bh = (v / max) * h;
    parts.push(
      `<rect x="${(x + i * bw).toFixed(2)}" y="${(y + h - bh).toFixed(2)}" width="${Math.max(1, bw - 1).toFixed(2)}" height="${bh.toFixed(2)}" fill="#3b7dd8"><title>${esc(label(i))}: ${v}</title></rect>`,
    );
  });
  const my = y + h - (mean / max) * h;
  parts.push(
    `<line x1="${x}" x2="${x + w}" y1="${my.toFixed(2)}" y2="${my.toFixed(2)}" stroke="#d33" stroke-dasharray="4 3"/>`,
  );
  parts.push(`<line x1="${x}" x2="${x + w}" y1="${y + h}" y2="${y + h}" stroke="#444"/>`);
  return parts.join("\n");
}

/** An SVG picture of one step: routing matrix (source rank x expert), load per rank and expert, memory. */
export function renderDemoSvg(config: EpConfig, outcome: DemoOutcome, backendName: string): string {
  const R = config.ranks;
  const E = config.experts;
  const L = E / R;
  const W = 900;
  const cw = Math.max(2, Math.min(28, 760 / E));
  const ch = Math.max(10, Math.min(28, 220 / R));
  const gx = 100;
  const gy = 110;
  const maxCell = Math.max(1, ...outcome.routing.flat());
  const parts: string[] = [];
  parts.push(
    `<text x="20" y="30" class="t">Switchyard demo: one MoE step on the ${esc(backendName)} backend</text>`,
  );
  parts.push(
    `<text x="20" y="52" class="s">${R} ranks (DP ${config.dpSize}), ${E} experts (${L} per rank), top-${config.topK}, hidden ${config.hidden}, ${config.layout} layout, ${config.inputDtype} in, ${config.dispatchDtype} on the wire</text>`,
  );
  const ok = outcome.dispatchMismatches === 0 && outcome.combineMismatches === 0;
  parts.push(
    `<text x="20" y="74" class="s" fill="${ok ? "#1a7f37" : "#c00"}">checked against the reference: dispatch ${outcome.dispatchMismatches} mismatched rows, combine ${outcome.combineMismatches} mismatched values (max |diff| ${outcome.maxCombineError})</text>`,
  );
  parts.push(
    `<text x="${gx}" y="${gy - 8}" class="h">routing matrix: rows sent by each source rank to each expert (max ${maxCell})</text>`,
  );
  for (let s = 0; s < R; s++) {
    parts.push(
      `<text x="${gx - 8}" y="${gy + s * ch + ch * 0.7}" class="s" text-anchor="end">rank ${s}</text>`,
    );
    for (let e = 0; e < E; e++) {
      const v = outcome.routing[s][e];
      parts.push(
        `<rect x="${(gx + e * cw).toFixed(2)}" y="${gy + s * ch}" width="${cw.toFixed(2)}" height="${ch}" fill="${heat(v, maxCell)}"><title>rank ${s} -> expert ${e}: ${v}</title></rect>`,
      );
    }
  }
  for (let r = 0; r <= R; r++) {
    const x = gx + r * L * cw;
    parts.push(
      `<line x1="${x.toFixed(2)}" x2="${x.toFixed(2)}" y1="${gy - 2}" y2="${gy + R * ch + 2}" stroke="#222" stroke-width="1.5"/>`,
    );
    if (r < R)
      parts.push(
        `<text x="${(x + (L * cw) / 2).toFixed(2)}" y="${gy + R * ch + 16}" class="s" text-anchor="middle">experts of rank ${r}</text>`,
      );
  }
  let y = gy + R * ch + 60;
  parts.push(bars(gx, y, 300, 120, outcome.rowsPerRank, "rows received per rank", (i) => `rank ${i}`));
  parts.push(
    bars(gx + 360, y, 400, 120, outcome.rowsPerExpert, "rows received per expert", (i) => `expert ${i}`),
  );
  y += 170;
  const layout = computeLayout(config);
  parts.push(
    `<text x="${gx}" y="${y}" class="h">buffer memory each rank needs: ${(layout.bytesPerRank / 2 ** 20).toFixed(2)} MiB</text>`,
  );
  const regions = Object.values(layout.regions).filter((r) => r.bytes > 0);
  regions.forEach((r, i) => {
    parts.push(
      `<text x="${gx}" y="${y + 20 + i * 17}" class="m" xml:space="preserve">${r.symmetric ? "symmetric" : "local    "}  ${r.name.padEnd(15)} ${r.dtype.padEnd(9)} [${r.shape.join(" x ")}]  ${(r.bytes / 2 ** 20).toFixed(3)} MiB</text>`,
    );
  });
  const H = y + 40 + regions.length * 17;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, sans-serif">
<style>.t{font-size:18px;font-weight:600}.h{font-size:13px;font-weight:600}.s{font-size:12px}.m{font-size:12px;font-family:monospace;white-space:pre}</style>
<rect width="100%" height="100%" fill="white"/>
${parts.join("\n")}
</svg>
`;
}
