import { type ButtonHTMLAttributes, type ReactNode, useId } from 'react';
import { Button } from '../ui/button';

type Props = Parameters<typeof Button>[0] & {
  /** Why it may not be used now (the signed-in role, or the job's state), or null. */
  why: string | null | undefined;
  testid?: string;
  /** A plain <button> with only `className`'s look (the queue table's small controls). */
  unstyled?: boolean;
  children: ReactNode;
};

/**
 * An action's button. One that may not be used now is still shown, so people learn the
 * action exists, but disabled, saying why: on hover (the title sits on a wrapper, as a
 * disabled button gets no pointer events in every browser) and as its accessible description.
 * One that is busy (`disabled`: its request is running) is aria-disabled and ignores clicks
 * instead: a focused button that becomes disabled drops the focus to the top of the page
 * (Chromium), and the keyboard user's place with it (Resume, then Tab, started over).
 */
export function ActionButton({ why, testid, unstyled, children, disabled, variant, size, onClick, ...props }: Props) {
  const id = useId();
  const busy = !why && !!disabled;
  const common: ButtonHTMLAttributes<HTMLButtonElement> & { 'data-testid'?: string } = {
    ...props,
    onClick: busy ? undefined : onClick,
    'aria-disabled': busy || undefined,
    // Refused, the reason is the one tooltip (on the wrapper): not the button's own hint too.
    title: why ? undefined : props.title,
    disabled: !!why,
    'aria-describedby': why ? id : undefined,
    'data-testid': testid,
  };
  return (
    <span title={why ?? undefined} data-testid={testid ? `${testid}-wrap` : undefined}>
      {unstyled ? (
        <button type="button" {...common}>
          {children}
        </button>
      ) : (
        <Button variant={variant} size={size} {...common}>
          {children}
        </Button>
      )}
      {why && (
        <span id={id} hidden>
          {why}
        </span>
      )}
    </span>
  );
}
