import type { BenchReport } from "./report.js";

/** The phases the chart shows (the halves are in the JSON and the SVG's table rows). */
const SHOWN = ["dispatch", "combine", "step"] as const;

/** Where the Vega-Lite chart goes: beside the JSON, `<name>.vl.json`. */
export function vegaLitePath(jsonPath: string): string {
  return `${jsonPath.replace(/\.json$/, "")}.vl.json`;
}

/**
 * The bench as a Vega-Lite (v5) chart with its data inlined: median µs against tokens, log scales,
 * a column per layout and a row per phase (dispatch, combine, step), a line per implementation.
 * Open it in any Vega-Lite viewer, or edit it to plot what the SVG does not. Points that failed
 * have no median and are left out; their errors are in the JSON.
 */
export function renderVegaLite(report: BenchReport): string {
  const values = report.points.flatMap((p) =>
    SHOWN.flatMap((phase) => {
      const s = p.phases[phase];
      if (!s || p.errors.length > 0) return [];
      return [{ layout: p.layout, tokens: p.tokens, impl: p.impl, phase, medianUs: s.median }];
    }),
  );
  const c = report.config;
  const spec = {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title: {
      text: `switchyard bench: ${report.device.gpus} x ${report.device.name ?? "GPU"}, commit ${(report.commit ?? "unknown").slice(0, 7)}`,
      subtitle: `hidden ${c.hidden}, ${c.experts} experts, top-${c.topK}, ${c.inputDtype} in, ${c.dispatchDtype} dispatch; median of the slowest rank per step`,
    },
    data: { values },
    facet: {
      column: { field: "layout", type: "nominal", title: "layout" },
      row: { field: "phase", type: "nominal", title: null, sort: [...SHOWN] },
    },
    spec: {
      width: 260,
      height: 180,
      mark: { type: "line", point: true },
      encoding: {
        x: { field: "tokens", type: "quantitative", scale: { type: "log" }, title: "tokens per rank" },
        y: { field: "medianUs", type: "quantitative", scale: { type: "log" }, title: "µs (median)" },
        color: { field: "impl", type: "nominal", title: "implementation" },
        tooltip: [
          { field: "impl", type: "nominal" },
          { field: "tokens", type: "quantitative" },
          { field: "medianUs", type: "quantitative", format: ".1f" },
        ],
      },
    },
    resolve: { scale: { y: "independent" } },
  };
  return `${JSON.stringify(spec, null, 1)}\n`;
}
