'use client';
/** A small time-series chart (uPlot on a canvas): jobs per second per series. */
import { useEffect, useRef } from 'react';
import 'uplot/dist/uPlot.min.css';

export interface RateSeries {
  label: string;
  color: string;
  values: number[];
}

export function RateChart({ times, series, height = 180, label }: { times: number[]; series: RateSeries[]; height?: number; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  const data = JSON.stringify([times, series.map((s) => s.values)]);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    let chart: { destroy(): void; setSize(s: { width: number; height: number }): void } | null = null;
    let cancelled = false;
    const build = async () => {
      const { default: UPlot } = await import('uplot');
      if (cancelled) return;
      chart?.destroy();
      const dark = document.documentElement.classList.contains('dark');
      const axis = { stroke: dark ? '#a1a1aa' : '#52525b', grid: { stroke: dark ? '#27272a' : '#e4e4e7', width: 1 }, ticks: { stroke: dark ? '#3f3f46' : '#d4d4d8' } };
      chart = new UPlot(
        {
          width: el.clientWidth || 600,
          height,
          legend: { show: true },
          cursor: { drag: { x: false, y: false } },
          // From 0 to the data's top: a floor of 1 job/s drew a night of 100 failures an hour
          // (0.03/s) as a line along the axis. (All zero: 0 to 1.)
          scales: { x: { time: true }, y: { range: (_u: unknown, _min: number, max: number) => [0, max > 0 ? max * 1.15 : 1] } },
          // Ticks at least 80 px apart: a tick's second line (the date at the first, the time
          // where the minute changes, ~95 px wide) overlapped the next one's at 10 s ticks.
          axes: [{ ...axis, space: 80 }, { ...axis, label: 'jobs/s', size: 50 }],
          series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, fill: `${s.color}22`, points: { show: false } }))],
        },
        [times.map((t) => t / 1000), ...series.map((s) => s.values)],
        el,
      );
    };
    void build();
    const ro = new ResizeObserver(() => chart?.setSize({ width: el.clientWidth, height }));
    ro.observe(el);
    const mo = new MutationObserver(() => void build());
    mo.observe(document.documentElement, { attributes: true, attributeFilter: ['class'] });
    return () => {
      cancelled = true;
      ro.disconnect();
      mo.disconnect();
      chart?.destroy();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [data, height]);
  return <div ref={box} role="img" aria-label={label} className="w-full" />;
}
