/** One figure measured side by side: the direct baseline, the bare Node proxy, the gateway. */
export type Row = {
  scenario: string;
  metric: string;
  unit: string;
  direct: number | null;
  bare: number | null;
  gateway: number;
  /** Human-readable target and whether the gateway met it. */
  target?: { text: string; met: boolean } | undefined;
};

const ratio = (x: number | null, base: number | null) =>
  x === null || base === null || base === 0 ? null : x / base;

/** Rows plus each figure as a ratio to the direct baseline (and the gateway's to the bare proxy). */
export function withRatios(rows: Row[]) {
  return rows.map((r) => ({
    ...r,
    bare_vs_direct: ratio(r.bare, r.direct),
    gateway_vs_direct: ratio(r.gateway, r.direct),
    gateway_vs_bare: ratio(r.gateway, r.bare),
  }));
}

function fmt(x: number | null): string {
  if (x === null || Number.isNaN(x)) return "-";
  const a = Math.abs(x);
  return a >= 100 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : x.toFixed(2);
}

const fmtRatio = (x: number | null) => (x === null || !Number.isFinite(x) ? "" : ` (${x.toFixed(2)}x)`);

/** The one table: each cell is the figure and, for bare and gateway, its ratio to direct. */
export function table(rows: Row[]): string {
  const head = [
    "scenario",
    "metric",
    "direct",
    "bare proxy (x direct)",
    "gateway (x direct)",
    "gw / bare",
    "target",
  ];
  const body = withRatios(rows).map((r) => [
    r.scenario,
    `${r.metric} [${r.unit}]`,
    fmt(r.direct),
    `${fmt(r.bare)}${fmtRatio(r.bare_vs_direct)}`,
    `${fmt(r.gateway)}${fmtRatio(r.gateway_vs_direct)}`,
    r.gateway_vs_bare === null ? "" : r.gateway_vs_bare.toFixed(2),
    r.target ? `${r.target.met ? "met" : "MISSED"}: ${r.target.text}` : "",
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] as string).length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] as number)).join(" | ");
  return [line(head), widths.map((w) => "-".repeat(w)).join("-|-"), ...body.map(line)].join("\n");
}
