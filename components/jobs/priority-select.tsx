'use client';
import { LAST_PRIORITY, priorityMeaning } from '@/lib/api/priority';
import { fieldClass, labelClass } from '../ui/form';

/**
 * A priority picked from every level, each said in words ("4 — runs after jobs of priority
 * 0–3 that are due"); `current`, if given, is marked with `currentMark` (" (now)").
 */
export function PrioritySelect({ value, onChange, current, currentMark }: { value: number; onChange(p: number): void; current?: number; currentMark?: string }) {
  return (
    <label className={labelClass}>
      Priority
      <select className={`w-fit ${fieldClass}`} value={value} onChange={(e) => onChange(Number(e.target.value))} aria-label="Priority">
        {Array.from({ length: LAST_PRIORITY + 1 }, (_, p) => (
          <option key={p} value={p}>
            {p} — {priorityMeaning(p)}
            {p === current ? currentMark : ''}
          </option>
        ))}
      </select>
    </label>
  );
}
