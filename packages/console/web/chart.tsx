// One uPlot time-series chart, sized to its container (so it fits 375 px and 1280 px alike) and
// rebuilt when its data changes. uPlot styles through the CSSOM, which the CSP allows.
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";

export const PALETTE = [
  "#2563eb",
  "#dc2626",
  "#059669",
  "#d97706",
  "#7c3aed",
  "#db2777",
  "#0891b2",
  "#4b5563",
];

export type Series = { label: string; values: Array<number | null> };

export function Chart(props: {
  title: string;
  unit: string;
  x: number[];
  series: Series[];
  /** The time window shown (unix seconds): a lone bucket must not stretch the axis over years. */
  range: [number, number];
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const width = () => Math.max(280, el.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 220,
        series: [
          {},
          ...props.series.map((s, i) => ({
            label: s.label,
            stroke: PALETTE[i % PALETTE.length] ?? "#2563eb",
            width: 2,
            points: { show: props.x.length < 40 },
            spanGaps: false,
          })),
        ],
        axes: [{}, { label: props.unit, size: 60 }],
        // Counts, rates and latencies all start at zero: a floating axis would exaggerate changes.
        scales: {
          x: { time: true, range: () => props.range },
          y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
        },
        legend: { live: false },
      },
      [props.x, ...props.series.map((s) => s.values)],
      el,
    );
    const ro = new ResizeObserver(() => plot.setSize({ width: width(), height: 220 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.destroy();
    };
  }, [props.x, props.series, props.unit, props.range]);
  return (
    <figure class="chart" data-testid={`chart-${props.title}`}>
      <figcaption>{props.title}</figcaption>
      <div ref={box} role="img" aria-label={`${props.title} chart`} />
    </figure>
  );
}
