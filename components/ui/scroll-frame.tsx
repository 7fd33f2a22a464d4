'use client';

import { type ReactNode, useEffect, useRef, useState } from 'react';

/**
 * A table's frame that scrolls sideways on a narrow screen, and says so: on a phone the
 * columns past the edge (a job's error, a worker's buttons) were cut off with nothing to say
 * they were there. While more lies to the right, the edge fades and an arrow in it shows
 * until the frame is first scrolled from its start; while the start is out of sight, the
 * left edge fades too. On a screen the table fits, nothing shows.
 */
export function ScrollFrame({ className = '', children }: { className?: string; children: ReactNode }) {
  const ref = useRef<HTMLDivElement>(null);
  // Null until measured (the server renders none): `data-overflow` appears with the first measure.
  const [edges, setEdges] = useState<{ left: boolean; right: boolean } | null>(null);
  const [scrolled, setScrolled] = useState(false);

  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const update = () => {
      // A pixel of slack: zoom and subpixel widths leave fractions.
      const left = el.scrollLeft > 1;
      const right = el.scrollLeft + el.clientWidth < el.scrollWidth - 1;
      setEdges((e) => (e?.left === left && e?.right === right ? e : { left, right }));
      // Scrolled away from the start (by the reader, or a focus it moved): the tag has done its work.
      if (left) setScrolled(true);
    };
    update();
    el.addEventListener('scroll', update, { passive: true });
    // The frame narrows with the window; the table widens as rows arrive.
    const resized = new ResizeObserver(update);
    resized.observe(el);
    if (el.firstElementChild) resized.observe(el.firstElementChild);
    return () => {
      el.removeEventListener('scroll', update);
      resized.disconnect();
    };
  }, []);

  return (
    // min-w-0: as a flex or grid item the frame must not grow to the table's width (the
    // scrolling box alone would not, being a scroll container; its wrapper would).
    <div className="relative min-w-0 max-w-full" data-overflow={edges === null ? undefined : edges.right ? 'right' : edges.left ? 'left' : 'none'}>
      <div ref={ref} className={`overflow-x-auto ${className}`}>
        {children}
      </div>
      {edges?.left && (
        <div aria-hidden className="pointer-events-none absolute inset-y-px left-px w-6 bg-gradient-to-r from-zinc-900/10 to-transparent dark:from-black/40" />
      )}
      {edges?.right && (
        <div aria-hidden className="pointer-events-none absolute inset-y-px right-px w-6 bg-gradient-to-l from-zinc-900/10 to-transparent dark:from-black/40" />
      )}
      {edges?.right && !scrolled && (
        // An arrow within the faded edge, not a word beside it: "more →" covered the header
        // labels of the columns still in view (a phone's "Error (variable parts…)", "Type").
        <span
          aria-hidden
          data-testid="scroll-hint"
          title="more columns to the right"
          className="pointer-events-none absolute right-0.5 top-1 flex h-5 w-5 items-center justify-center rounded-full bg-zinc-800/85 text-xs font-medium text-white shadow dark:bg-zinc-200/90 dark:text-zinc-900"
        >
          →
        </span>
      )}
    </div>
  );
}
