'use client';
/**
 * Keyboard shortcuts: single keys (`/`, `?`, `r`, `p`, `t`) and two-key sequences
 * (`g j`). Ignored while typing in a field (Escape there is the field's: it empties a search
 * box, closes a list of suggestions — it does not clear the selection), and while a modal
 * dialog is open (`g w` would leave the page and drop a half-typed reason or count), except
 * Escape; and ignored once something else took the key (a menu that closed on it).
 */
import { useEffect, useRef } from 'react';

export type ShortcutMap = Record<string, (e: KeyboardEvent) => void>;

export const SHORTCUTS_HELP: [string, string][] = [
  ['/', 'search jobs'],
  ['?', 'this help'],
  ['g o', 'overview'],
  ['g j', 'jobs'],
  ['g r', 'running jobs'],
  ['g d', 'dead letter'],
  ['g w', 'workers'],
  ['g s', 'schedules'],
  ['g a', 'audit log'],
  ['r', 'refresh now'],
  ['p', 'pause / resume live refresh'],
  ['t', 'light / dark theme'],
  ['Esc', 'close a dialog, clear the selection'],
];

/** Inputs nothing is typed into: a row's checkbox keeps the focus after a click, and the keys must still work. */
const NOT_TYPED = new Set(['checkbox', 'radio', 'button', 'submit', 'reset', 'range', 'color', 'file']);

const typing = (t: EventTarget | null) => {
  const el = t as HTMLInputElement | null;
  if (!el) return false;
  if (el.tagName === 'INPUT') return !NOT_TYPED.has((el.type ?? '').toLowerCase());
  return el.isContentEditable || ['TEXTAREA', 'SELECT'].includes(el.tagName);
};

/** Whether a key press may act as a shortcut. */
export function shortcutAllowed(key: string, target: EventTarget | null, modalOpen: boolean): boolean {
  return !typing(target) && (key === 'Escape' || !modalOpen);
}

const modalOpen = () => typeof document !== 'undefined' && document.querySelector('[role="dialog"][aria-modal="true"]') !== null;

export function useShortcuts(map: ShortcutMap) {
  const ref = useRef(map);
  ref.current = map;
  useEffect(() => {
    let prefix: string | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onKey = (e: KeyboardEvent) => {
      if (e.metaKey || e.ctrlKey || e.altKey || e.defaultPrevented) return;
      if (!shortcutAllowed(e.key, e.target, modalOpen())) return;
      const key = prefix ? `${prefix} ${e.key}` : e.key;
      if (prefix) {
        prefix = null;
        clearTimeout(timer);
      } else if (e.key === 'g') {
        prefix = 'g';
        timer = setTimeout(() => (prefix = null), 1200);
        return;
      }
      const fn = ref.current[key];
      if (fn) {
        e.preventDefault();
        fn(e);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => {
      window.removeEventListener('keydown', onKey);
      clearTimeout(timer);
    };
  }, []);
}
