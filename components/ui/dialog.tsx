'use client';
import { type ReactNode, useEffect, useId, useRef } from 'react';
import { UserText } from './user-text';

const FOCUSABLE = 'button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), a[href], [tabindex]:not([tabindex="-1"])';

/**
 * A modal dialog: Escape or the backdrop closes it (not the backdrop with `keepOnBackdrop`:
 * a dialog holding what the operator typed, which a stray click beside it would throw away);
 * focus moves into it, stays in it (Tab and Shift+Tab wrap around, as aria-modal promises),
 * and goes back where it was.
 */
export function Dialog({
  title,
  onClose,
  children,
  wide,
  keepOnBackdrop,
}: {
  title: ReactNode;
  onClose(): void;
  children: ReactNode;
  wide?: boolean;
  keepOnBackdrop?: boolean;
}) {
  const id = useId();
  const ref = useRef<HTMLDivElement>(null);
  const closeRef = useRef(onClose);
  closeRef.current = onClose;
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    // The field the dialog is for when it names one ([data-autofocus]), else the first
    // focusable (the header's ✕). One selector list would find whichever comes first in the
    // page, always the ✕.
    const first = ref.current?.querySelector<HTMLElement>('[data-autofocus]') ?? ref.current?.querySelector<HTMLElement>(FOCUSABLE);
    first?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        e.stopPropagation();
        closeRef.current();
      }
      if (e.key === 'Tab' && ref.current) {
        const all = [...ref.current.querySelectorAll<HTMLElement>(FOCUSABLE)];
        if (!all.length) return;
        const at = all.indexOf(document.activeElement as HTMLElement);
        const next = e.shiftKey ? (at <= 0 ? all.length - 1 : at - 1) : at === -1 || at === all.length - 1 ? 0 : at + 1;
        e.preventDefault();
        all[next]!.focus();
      }
    };
    window.addEventListener('keydown', onKey, true);
    return () => {
      window.removeEventListener('keydown', onKey, true);
      // Back where it was; or, when that is gone (a bulk action's buttons leave with the
      // selection it cleared) or disabled (a job's Requeue once it is queued and due), to the
      // page's content, not to the top of the document.
      if (before?.isConnected && !before.matches(':disabled')) before.focus?.();
      else document.querySelector<HTMLElement>('main[tabindex]')?.focus({ preventScroll: true });
    };
  }, []);
  return (
    <div className="fixed inset-0 z-50 flex items-start justify-center overflow-y-auto bg-zinc-950/50 p-4 pt-[8vh]" onMouseDown={(e) => !keepOnBackdrop && e.target === e.currentTarget && onClose()}>
      <div
        ref={ref}
        role="dialog"
        aria-modal="true"
        aria-labelledby={id}
        className={`w-full ${wide ? 'max-w-4xl' : 'max-w-lg'} rounded-lg border border-zinc-200 bg-white shadow-xl dark:border-zinc-800 dark:bg-zinc-900`}
      >
        <div className="flex items-center justify-between border-b border-zinc-200 px-4 py-3 dark:border-zinc-800">
          <h2 id={id} className="text-base font-semibold">
            {title}
          </h2>
          <button type="button" onClick={onClose} aria-label="Dismiss" className="rounded p-1 text-zinc-500 hover:bg-zinc-100 dark:hover:bg-zinc-800">
            ✕
          </button>
        </div>
        {/* scroll-pb: what is scrolled into view (an error, the field tabbed to) clears the sticky footer. */}
        <div className="max-h-[75vh] scroll-pb-20 overflow-y-auto p-4">{children}</div>
      </div>
    </div>
  );
}

/** Why the dialog's request failed (the server's message, user text among it), announced. */
export function DialogError({ error }: { error: string | null | undefined }) {
  // Scrolled into view when it appears: in a form taller than the window it came below the fold.
  const ref = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (error) ref.current?.scrollIntoView?.({ block: 'nearest' });
  }, [error]);
  if (!error) return null;
  return (
    <p ref={ref} role="alert" className="rounded border border-red-300 bg-red-50 p-2 text-red-800 dark:border-red-900 dark:bg-red-950 dark:text-red-200">
      <UserText text={error} />
    </p>
  );
}

/**
 * The dialog's buttons, right-aligned under a rule (Back, then the action), kept at the bottom
 * of the dialog's scrolling body: a form taller than the window keeps its buttons in sight.
 */
export function DialogFooter({ children }: { children: ReactNode }) {
  return (
    <div className="sticky -bottom-4 -mx-4 -mb-4 flex flex-wrap items-center justify-end gap-2 border-t border-zinc-200 bg-white px-4 py-3 dark:border-zinc-800 dark:bg-zinc-900">
      {children}
    </div>
  );
}
