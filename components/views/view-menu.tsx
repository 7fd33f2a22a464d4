'use client';
import Link from 'next/link';
import { useEffect, useId, useRef, useState } from 'react';
import type { SavedViewDto } from '@/lib/api/types';
import { visible } from '@/lib/ui/visible';
import { viewHref } from '@/lib/views/pages';
import { ActionButton } from '../actions/action-button';
import { Button } from '../ui/button';
import { UserText } from '../ui/user-text';

/**
 * The page's saved views: a menu of links (opening one navigates to the page with its
 * filters), the one the applied filters equal marked, × on the views this user may delete,
 * and "Save current filters…". Names are user text, rendered escaped.
 */
export function ViewMenu({
  views,
  loadError,
  activeId,
  saveWhy,
  onOpen,
  onSave,
  onDelete,
}: {
  /** undefined while loading. */
  views: SavedViewDto[] | undefined;
  loadError?: string | null;
  /** The view whose query the page's applied filters equal. */
  activeId: string | null;
  /** Why this user may not save a view (a viewer), or null. */
  saveWhy: string | null;
  /** Told when the menu opens (to read the views again: others save them too). */
  onOpen?(): void;
  onSave(): void;
  onDelete(view: SavedViewDto): void;
}) {
  const [open, setOpen] = useState(false);
  const ref = useRef<HTMLDivElement>(null);
  const menuId = useId();
  const active = views?.find((v) => v.id === activeId);
  useEffect(() => {
    if (!open) return;
    const onDown = (e: MouseEvent) => {
      if (!ref.current?.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      // Taken: the page's Escape (the jobs list's "clear the selection") leaves it alone.
      e.preventDefault();
      setOpen(false);
    };
    document.addEventListener('mousedown', onDown);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('mousedown', onDown);
      document.removeEventListener('keydown', onKey);
    };
  }, [open]);
  return (
    <div className="relative inline-block text-sm" ref={ref} data-testid="saved-views">
      <Button
        size="sm"
        aria-expanded={open}
        aria-controls={menuId}
        onClick={() => {
          if (!open) onOpen?.();
          setOpen(!open);
        }}
        title="named filters shared with everyone who signs in"
      >
        Views
        {active && (
          <span className="max-w-48 truncate font-normal text-zinc-500 dark:text-zinc-400" data-testid="active-view">
            : <UserText text={active.name} />
          </span>
        )}
        <span aria-hidden>▾</span>
      </Button>
      {open && (
        <div
          id={menuId}
          className="absolute right-0 z-40 mt-1 w-80 rounded-md border border-zinc-200 bg-white p-1 shadow-lg dark:border-zinc-800 dark:bg-zinc-900"
          data-testid="saved-views-menu"
        >
          {loadError ? (
            <p className="px-2 py-1.5 text-xs text-red-700 dark:text-red-400">Cannot load the saved views: {loadError}</p>
          ) : !views ? (
            <p className="px-2 py-1.5 text-xs text-zinc-500">Loading…</p>
          ) : views.length === 0 ? (
            <p className="px-2 py-1.5 text-xs text-zinc-500">No saved views yet. Apply filters, then save them here for everyone.</p>
          ) : (
            <ul className="max-h-80 overflow-y-auto" aria-label="Saved views">
              {views.map((v) => (
                <li key={v.id} className="flex items-center gap-1 rounded hover:bg-zinc-100 dark:hover:bg-zinc-800" data-testid="saved-view">
                  <Link
                    href={viewHref(v)}
                    onClick={() => setOpen(false)}
                    aria-current={v.id === activeId ? 'page' : undefined}
                    className={`min-w-0 flex-1 px-2 py-1.5 ${v.id === activeId ? 'font-semibold' : ''}`}
                    title={v.query ? `${v.query}${v.createdBy ? ` · saved by ${v.createdBy}` : ''}` : 'no filter'}
                  >
                    <span className="block truncate">
                      {v.id === activeId && <span aria-hidden>✓ </span>}
                      <UserText text={v.name} />
                    </span>
                    {v.createdBy && (
                      <span className="block truncate text-xs font-normal text-zinc-500">
                        by <UserText text={v.createdBy} />
                      </span>
                    )}
                  </Link>
                  {v.deletable && (
                    <button
                      type="button"
                      className="rounded px-2 py-1 text-zinc-500 hover:bg-red-50 hover:text-red-700 dark:hover:bg-red-950 dark:hover:text-red-300"
                      aria-label={`Delete view ${visible(v.name)}`}
                      title="delete this view (for everyone)"
                      onClick={() => {
                        setOpen(false);
                        onDelete(v);
                      }}
                    >
                      ×
                    </button>
                  )}
                </li>
              ))}
            </ul>
          )}
          <div className="mt-1 border-t border-zinc-200 pt-1 dark:border-zinc-800">
            <ActionButton
              why={saveWhy}
              unstyled
              className="w-full rounded px-2 py-1.5 text-left hover:bg-zinc-100 disabled:cursor-not-allowed disabled:opacity-40 dark:hover:bg-zinc-800"
              onClick={() => {
                setOpen(false);
                onSave();
              }}
            >
              Save current filters…
            </ActionButton>
          </div>
        </div>
      )}
    </div>
  );
}
