'use client';
import { useMemo, useState } from 'react';
import { type JsonNode, parseJson, printJson } from '@/lib/ui/json';
import { CopyButton } from '../ui/copy-button';
import { UserText } from '../ui/user-text';

/** A JSON value as a collapsible tree (text only: every value is rendered escaped). */
export function PayloadView({ text, testid = 'payload' }: { text: string; testid?: string }) {
  const parsed = useMemo(() => {
    try {
      return parseJson(text);
    } catch {
      return null;
    }
  }, [text]);
  const [open, setOpen] = useState<'default' | 'all' | 'none'>('default');
  const pretty = parsed ? printJson(parsed) : text;
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
}

function Node({ node, depth, mode, name }: { node: JsonNode; depth: number; mode: 'default' | 'all' | 'none'; name?: string }) {
  const label = name !== undefined ? <span className="text-violet-700 dark:text-violet-300">
        <UserText text={JSON.stringify(name)} />:{' '}
      </span> : null;
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
    const isOpen = mode === 'all' || (mode === 'default' && depth < 3 && children.length <= 100);
    return (
      <details open={isOpen} className="[&>summary]:cursor-pointer">
        <summary className="list-none">
          {label}
          {o}
          <span className="text-zinc-400">
            {' '}
            {children.length} {node.kind === 'object' ? (children.length === 1 ? 'key' : 'keys') : children.length === 1 ? 'item' : 'items'}{' '}
          </span>
          {!isOpen && c}
        </summary>
        <div className="border-l border-zinc-200 pl-4 dark:border-zinc-800">
          {children.map(([k, v]) => (
            <Node key={k} node={v} depth={depth + 1} mode={mode} name={node.kind === 'object' ? k : undefined} />
          ))}
        </div>
        <div>{c}</div>
      </details>
    );
  }
  const value =
    node.kind === 'string' ? (
      <span className="break-all text-emerald-700 dark:text-emerald-300">
        <UserText text={JSON.stringify(node.value)} />
      </span>
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
