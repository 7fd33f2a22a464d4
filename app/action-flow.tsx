'use client';
/**
 * The container behind every action button: asks the server for a preview of exactly
 * what the action would touch, shows it, and on confirmation runs the action and shows
 * the per-item report. Every view opens it with start({...}).
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useCallback, useState } from 'react';
import { ActionDialog, type ActionOptionsState } from '@/components/actions/action-dialog';
import { type ActionTarget, runAction } from '@/lib/api/actions';
import { actionKeys, deadLetterKeys, jobKeys, statsKeys, workerKeys } from '@/lib/api/keys';
import type { BulkAction, BulkReportDto } from '@/lib/api/types';
import { forbiddenFor, meQuery } from '@/lib/api/auth';

export interface ActionRequest {
  action: BulkAction;
  target: ActionTarget;
  /** The target in words for the dialog. */
  label: string;
  defaults?: Partial<ActionOptionsState>;
  onDone?(report: BulkReportDto): void;
}

const OFFERS: Record<BulkAction, { resetAttempts?: boolean; revokeLease?: boolean }> = {
  requeue: { resetAttempts: true, revokeLease: true },
  cancel: {},
  delete: {},
  recover: {},
};

export function useActionFlow(): { start(r: ActionRequest): void; element: ReactNode } {
  const [req, setReq] = useState<ActionRequest | null>(null);
  const [options, setOptions] = useState<ActionOptionsState>({ resetAttempts: false, revokeLease: false });
  const [reason, setReason] = useState('');
  const me = useQuery(meQuery());
  const role = me.data?.role ?? null;
  const qc = useQueryClient();
  const preview = useQuery({
    queryKey: [...actionKeys.all, 'preview', req?.action, req?.target, options],
    queryFn: () => runAction(req!.action, req!.target, { ...options, preview: true }),
    // A role the server refuses the action is told so once, by the dialog, not again by the
    // preview's 403.
    enabled: !!req && !forbiddenFor(req.action, role),
    // A preview is what the operator confirmed: never refresh it behind their back.
    staleTime: Infinity,
    gcTime: 0,
    refetchOnWindowFocus: false,
    retry: false,
  });
  const apply = useMutation({
    mutationFn: () => {
      const p = preview.data!;
      // The set the preview showed. When it listed every job it matched, exactly those, by id,
      // each as it was (seen): one that changed since is reported skipped with why, and one that
      // joined the filter (requeued into the status, say) is not touched. Past the listing's cap,
      // the filter again, pinned to the preview: no job newer than it, none that finished after it.
      const listedAll = p.total > 0 && !p.itemsTruncated && p.items.length === p.total;
      const seen = p.seen ? { seen: p.seen } : {};
      const target: ActionTarget =
        'filter' in req!.target && listedAll
          ? { ids: p.items.map((i) => i.id), ...seen }
          : 'filter' in req!.target && p.maxId
            ? { filter: { ...req!.target.filter, maxId: p.maxId, ...(p.finishedBy ? { finishedBy: p.finishedBy } : {}) } }
            : 'ids' in req!.target
              ? { ids: req!.target.ids, ...seen }
              : req!.target;
      const expectIds = 'all' in req!.target ? p.items.map((i) => i.id) : undefined;
      return runAction(req!.action, target, { ...options, preview: false, expectIds, ...(reason.trim() ? { reason: reason.trim().slice(0, 500) } : {}) });
    },
    onSuccess: (report) => {
      req?.onDone?.(report);
      for (const key of [jobKeys.all, statsKeys.all, deadLetterKeys.all, workerKeys.all]) void qc.invalidateQueries({ queryKey: key });
    },
  });
  const resetApply = apply.reset;
  const close = useCallback(() => {
    setReq(null);
    resetApply();
  }, [resetApply]);
  const start = useCallback(
    (r: ActionRequest) => {
      resetApply();
      setReason('');
      setOptions({ resetAttempts: false, revokeLease: false, ...r.defaults });
      setReq(r);
    },
    [resetApply],
  );
  const element = req ? (
    <ActionDialog
      action={req.action}
      target={req.label}
      options={options}
      offers={OFFERS[req.action]}
      onOptions={setOptions}
      reason={reason}
      onReason={setReason}
      forbidden={forbiddenFor(req.action, role)}
      preview={preview.data}
      previewLoading={preview.isFetching}
      applying={apply.isPending}
      report={apply.data}
      error={(preview.error ?? apply.error)?.message}
      onConfirm={() => apply.mutate()}
      onClose={close}
    />
  ) : null;
  return { start, element };
}
