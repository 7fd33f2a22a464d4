'use client';
import { memo, type ReactNode, useMemo, useState } from 'react';
import { type JsonNode, parseJson, printJson } from '@/lib/ui/json';
import { CopyButton } from '../ui/copy-button';
import { UserText } from '../ui/user-text';

/**
 * A JSON value as a collapsible tree (text only: every value is rendered escaped). Memoized,
 * and a collapsed node renders none of its children: the job page re-renders every second
 * (its clock), and a payload of a few hundred kilobytes re-parsed and re-rendered whole each
 * time (60,000 rows, collapsed or not) froze the page for seconds at a time.
 */
export const PayloadView = memo(function PayloadView({ text, testid = 'payload' }: { text: string; testid?: string }) {
  const parsed = useMemo(() => {
    try {
      return parseJson(text);
    } catch {
      return null;
    }
  }, [text]);
  const [open, setOpen] = useState<'default' | 'all' | 'none'>('default');
  const pretty = useMemo(() => (parsed ? printJson(parsed) : text), [parsed, text]);
  return (
    <div data-testid={testid}>
      <div className="mb-2 flex flex-wrap items-center gap-2">
        <CopyButton text={pretty} label="Copy JSON" />
        <button type="button" className="text-xs text-sky-700 hover:underline dark:text-sky-400" onClick={() => setOpen('all')}>
          Expand all
        </button>
        <button type="button" className="text-xs text-sky-700 hover:underline dark:text-sky-400" onClick={() => setOpen('none')}>
          Collapse all
        </button>
        <span className="text-xs text-zinc-500">{text.length.toLocaleString('en')} characters</span>
      </div>
      <div className="overflow-x-auto rounded bg-zinc-50 p-3 font-mono text-xs leading-5 dark:bg-zinc-950">
        {parsed ? <Node key={open} node={parsed} depth={0} mode={open} /> : <pre className="whitespace-pre-wrap break-all">
            <UserText text={text} multiline />
          </pre>}
      </div>
    </div>
  );
});

type Mode = 'default' | 'all' | 'none';

function Node({ node, depth, mode, name }: { node: JsonNode; depth: number; mode: Mode; name?: string }) {
  const label =
    name !== undefined ? (
      <span className="text-violet-700 dark:text-violet-300">
        <UserText text={JSON.stringify(name)} />:{' '}
      </span>
    ) : null;
  if (node.kind === 'object' || node.kind === 'array') {
    const children = node.kind === 'object' ? node.entries : node.items.map((v, k) => [String(k), v] as [string, JsonNode]);
    const [o, c] = node.kind === 'object' ? ['{', '}'] : ['[', ']'];
    if (!children.length)
      return (
        <div>
          {label}
          {o}
          {c}
        </div>
      );
    const what = node.kind === 'object' ? (children.length === 1 ? 'key' : 'keys') : children.length === 1 ? 'item' : 'items';
    return (
      <Branch
        entries={children}
        named={node.kind === 'object'}
        head={
          <>
            {label}
            {o}
            <span className="text-zinc-400">
              {' '}
              {children.length} {what}{' '}
            </span>
          </>
        }
        close={c}
        depth={depth}
        mode={mode}
      />
    );
  }
  const value =
    node.kind === 'string' ? (
      <LongString text={JSON.stringify(node.value)} />
    ) : node.kind === 'number' ? (
      <span className="text-sky-700 dark:text-sky-300">{node.raw}</span>
    ) : (
      <span className="text-orange-700 dark:text-orange-300">{node.kind === 'null' ? 'null' : String(node.value)}</span>
    );
  return (
    <div>
      {label}
      {value}
    </div>
  );
}

/** Characters of a string value shown before "show all": a 20,000-character value filled screens. */
const STRING_SHOWN = 1_000;

function LongString({ text }: { text: string }) {
  const [all, setAll] = useState(false);
  const cut = !all && text.length > STRING_SHOWN;
  return (
    <span className="break-all text-emerald-700 dark:text-emerald-300">
      <UserText text={cut ? text.slice(0, STRING_SHOWN) : text} />
      {cut && (
        <>
          …{' '}
          <button type="button" className="font-sans text-sky-700 hover:underline dark:text-sky-400" onClick={() => setAll(true)} data-testid="show-whole-string">
            show all {text.length.toLocaleString('en')} characters
          </button>
        </>
      )}
    </span>
  );
}

/** Children shown at once, and added per click: an array of 60,000 rows opened whole took the page for seconds. */
const CHILDREN_PER_STEP = 200;

/** An object or array: its children are rendered only while it is open, CHILDREN_PER_STEP at a time. */
function Branch(p: { entries: [string, JsonNode][]; named: boolean; head: ReactNode; close: string; depth: number; mode: Mode }) {
  const [open, setOpen] = useState(p.mode === 'all' || (p.mode === 'default' && p.depth < 3 && p.entries.length <= 100));
  const [shown, setShown] = useState(CHILDREN_PER_STEP);
  const more = p.entries.length - shown;
  return (
    <details open={open} onToggle={(e) => setOpen(e.currentTarget.open)} className="[&>summary]:cursor-pointer">
      <summary className="list-none">
        {p.head}
        {!open && p.close}
      </summary>
      {open && (
        <>
          <div className="border-l border-zinc-200 pl-4 dark:border-zinc-800">
            {p.entries.slice(0, shown).map(([k, v]) => (
              <Node key={k} node={v} depth={p.depth + 1} mode={p.mode} name={p.named ? k : undefined} />
            ))}
            {more > 0 && (
              <button type="button" className="text-sky-700 hover:underline dark:text-sky-400" onClick={() => setShown((n) => n + CHILDREN_PER_STEP)}>
                show {Math.min(more, CHILDREN_PER_STEP)} more ({more.toLocaleString('en')} not shown)
              </button>
            )}
          </div>
          <div>{p.close}</div>
        </>
      )}
    </details>
  );
}
