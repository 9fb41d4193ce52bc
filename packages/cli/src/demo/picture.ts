import type { DemoOutcome } from "@switchyard/conformance";
import { computeLayout, type EpConfig } from "@switchyard/core";

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");

/** Font sizes of the text classes (px), shared by the style sheet and the label spacing. */
export const FONT = { t: 18, h: 13, s: 12, a: 10, m: 12 } as const;
/** A generous width of one character of a class, for spacing labels so they never touch. */
export const charWidth = (cls: keyof typeof FONT) => FONT[cls] * 0.62;

function text(x: number, y: number, s: string, cls: keyof typeof FONT, anchor = "start", extra = ""): string {
  return `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" class="${cls}" text-anchor="${anchor}"${extra}>${esc(s)}</text>`;
}

function heat(v: number, max: number): string {
  const t = max > 0 ? v / max : 0;
  return `hsl(212, 70%, ${Math.round(97 - t * 62)}%)`;
}

/** Every how many of `n` slots `step` px apart a label of up to `chars` characters fits. */
function every(step: number, chars: number, cls: keyof typeof FONT): number {
  return Math.max(1, Math.ceil((chars * charWidth(cls) + 6) / step));
}

/** Round tick values from 0 to max: 0, max/2 and max, as integers where the data are. */
function ticks(max: number): number[] {
  return max <= 1 ? [0, max] : [0, Math.round(max / 2), max];
}

/** A bar chart with a value axis (ticks), an index axis (labels spaced so they never overlap) and the mean. */
function bars(
  x: number,
  y: number,
  w: number,
  h: number,
  values: number[],
  title: string,
  axis: string,
): string {
  const max = Math.max(1, ...values);
  const mean = values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
  const bw = w / values.length;
  const parts = [text(x, y - 10, `${title} (dashed: mean ${mean.toFixed(1)})`, "h")];
  for (const v of ticks(max)) {
    const ty = y + h - (v / max) * h;
    parts.push(`<line x1="${x - 4}" x2="${x}" y1="${ty.toFixed(1)}" y2="${ty.toFixed(1)}" stroke="#444"/>`);
    parts.push(text(x - 6, ty + 4, String(v), "a", "end"));
  }
  parts.push(`<line x1="${x}" x2="${x}" y1="${y}" y2="${y + h}" stroke="#444"/>`);
  const n = every(bw, String(values.length - 1).length, "a");
  values.forEach((v, i) => {
    const bh = (v / max) * h;
    parts.push(
      `<rect x="${(x + i * bw).toFixed(2)}" y="${(y + h - bh).toFixed(2)}" width="${Math.max(1, bw - 1).toFixed(2)}" height="${bh.toFixed(2)}" fill="#3b7dd8"><title>${esc(axis)} ${i}: ${v}</title></rect>`,
    );
    if (i % n === 0) parts.push(text(x + (i + 0.5) * bw, y + h + 13, String(i), "a", "middle"));
  });
  const my = y + h - (mean / max) * h;
  parts.push(
    `<line x1="${x}" x2="${x + w}" y1="${my.toFixed(2)}" y2="${my.toFixed(2)}" stroke="#d33" stroke-dasharray="4 3"/>`,
  );
  parts.push(`<line x1="${x}" x2="${x + w}" y1="${y + h}" y2="${y + h}" stroke="#444"/>`);
  parts.push(text(x + w / 2, y + h + 28, axis, "a", "middle"));
  return parts.join("\n");
}

/** The heat map's colour scale: swatches from 0 to the largest cell, with their values. */
function legend(x: number, y: number, max: number): string {
  const steps = [0, 0.25, 0.5, 0.75, 1];
  const parts = [text(x, y + 12, "rows per cell:", "s")];
  steps.forEach((f, i) => {
    const sx = x + 96 + i * 56;
    const v = Math.round(f * max);
    parts.push(`<rect x="${sx}" y="${y}" width="22" height="16" fill="${heat(v, max)}" stroke="#999"/>`);
    parts.push(text(sx + 26, y + 12, String(v), "a"));
  });
  return parts.join("\n");
}

/** The routing matrix (source rank x expert), its axes and its colour legend; returns its height. */
function matrix(config: EpConfig, routing: number[][], gx: number, gy: number, parts: string[]): number {
  const R = config.ranks;
  const E = config.experts;
  const L = E / R;
  const cw = Math.max(2, Math.min(28, 760 / E));
  const ch = Math.max(10, Math.min(28, 220 / R));
  const maxCell = Math.max(1, ...routing.flat());
  parts.push(text(gx, gy - 10, "routing matrix: rows each source rank sends to each expert", "h"));
  const rowEvery = Math.max(1, Math.ceil((FONT.s + 2) / ch));
  for (let s = 0; s < R; s++) {
    if (s % rowEvery === 0) parts.push(text(gx - 8, gy + s * ch + ch / 2 + 4, `rank ${s}`, "s", "end"));
    for (let e = 0; e < E; e++) {
      const v = routing[s][e];
      parts.push(
        `<rect x="${(gx + e * cw).toFixed(2)}" y="${(gy + s * ch).toFixed(2)}" width="${cw.toFixed(2)}" height="${ch.toFixed(2)}" fill="${heat(v, maxCell)}"><title>rank ${s} -> expert ${e}: ${v}</title></rect>`,
      );
    }
  }
  const bottom = gy + R * ch;
  const group = L * cw;
  const long = group >= `rank ${R - 1}`.length * charWidth("s") + 8;
  const labelEvery = long ? 1 : every(group, String(R - 1).length, "s");
  for (let r = 0; r <= R; r++) {
    const x = gx + r * group;
    parts.push(
      `<line x1="${x.toFixed(2)}" x2="${x.toFixed(2)}" y1="${gy - 2}" y2="${bottom + 2}" stroke="#222" stroke-width="1.5"/>`,
    );
    if (r < R && r % labelEvery === 0) {
      parts.push(text(x + group / 2, bottom + 15, long ? `rank ${r}` : String(r), "s", "middle"));
    }
  }
  parts.push(
    text(
      gx,
      bottom + 31,
      `experts, grouped by the rank hosting them (${L} per rank; expert e is on rank floor(e / ${L}))`,
      "a",
    ),
  );
  parts.push(
    text(
      gx - 80,
      gy + (R * ch) / 2,
      "source rank",
      "a",
      "middle",
      ` transform="rotate(-90 ${gx - 80} ${gy + (R * ch) / 2})"`,
    ),
  );
  parts.push(legend(gx, bottom + 42, maxCell));
  return R * ch + 70;
}

/** An SVG picture of one step: routing matrix (source rank x expert), load per rank and expert, memory. */
export function renderDemoSvg(config: EpConfig, outcome: DemoOutcome, backendName: string): string {
  const R = config.ranks;
  const E = config.experts;
  const W = 900;
  const gx = 100;
  const parts: string[] = [];
  parts.push(text(20, 30, `Switchyard demo: one MoE step on the ${backendName} backend`, "t"));
  parts.push(
    text(
      20,
      52,
      `${R} ranks (DP ${config.dpSize}), ${E} experts (${E / R} per rank), top-${config.topK}, hidden ${config.hidden}, ${config.layout} layout, ${config.inputDtype} in, ${config.dispatchDtype} on the wire`,
      "s",
    ),
  );
  const ok = outcome.dispatchMismatches === 0 && outcome.combineMismatches === 0;
  parts.push(
    text(
      20,
      74,
      `checked against the reference: dispatch ${outcome.dispatchMismatches} mismatched rows, combine ${outcome.combineMismatches} mismatched values (max |diff| ${outcome.maxCombineError})`,
      "s",
      "start",
      ` fill="${ok ? "#1a7f37" : "#c00"}"`,
    ),
  );
  let y = 120 + matrix(config, outcome.routing, gx, 120, parts) + 50;
  parts.push(bars(gx, y, 300, 120, outcome.rowsPerRank, "rows received per rank", "rank"));
  parts.push(bars(gx + 380, y, 380, 120, outcome.rowsPerExpert, "rows received per expert", "expert"));
  y += 180;
  const layout = computeLayout(config);
  parts.push(
    text(gx, y, `buffer memory each rank needs: ${(layout.bytesPerRank / 2 ** 20).toFixed(2)} MiB`, "h"),
  );
  const regions = Object.values(layout.regions).filter((r) => r.bytes > 0);
  regions.forEach((r, i) => {
    parts.push(
      text(
        gx,
        y + 20 + i * 17,
        `${r.symmetric ? "symmetric" : "local    "}  ${r.name.padEnd(15)} ${r.dtype.padEnd(9)} [${r.shape.join(" x ")}]  ${(r.bytes / 2 ** 20).toFixed(3)} MiB`,
        "m",
        "start",
        ` xml:space="preserve"`,
      ),
    );
  });
  const H = y + 40 + regions.length * 17;
  const style = Object.entries(FONT)
    .map(
      ([c, px]) =>
        `.${c}{font-size:${px}px${c === "t" || c === "h" ? ";font-weight:600" : ""}${c === "m" ? ";font-family:monospace;white-space:pre" : ""}}`,
    )
    .join("");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, sans-serif">
<style>${style}</style>
<rect width="100%" height="100%" fill="white"/>
${parts.join("\n")}
</svg>
`;
}
