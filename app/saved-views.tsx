'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useSearchParams } from 'next/navigation';
import { useState } from 'react';
import { DeleteViewDialog } from '@/components/views/delete-view-dialog';
import { SaveViewDialog } from '@/components/views/save-view-dialog';
import { ViewMenu } from '@/components/views/view-menu';
import { meQuery } from '@/lib/api/auth';
import { filtersFromParams, filterKey } from '@/lib/api/filters';
import { viewKeys } from '@/lib/api/keys';
import type { SavedViewDto } from '@/lib/api/types';
import { deleteView, savedViewsQuery, saveView } from '@/lib/api/views';
import { conditionText, filterConditions } from '@/lib/ui/audit-target';
import { roleRefusal } from '@/lib/ui/role-gate';
import { VIEW_PAGE_PATHS, type ViewPage, viewQueryOf } from '@/lib/views/pages';

/** The Views control of /jobs and /dead-letter: the page's saved views, saving the applied filters, deleting a view. */
export function SavedViews({ page }: { page: ViewPage }) {
  const params = useSearchParams();
  const query = viewQueryOf(page, params);
  const views = useQuery(savedViewsQuery(page));
  const role = useQuery(meQuery()).data?.role;
  const qc = useQueryClient();
  const [asking, setAsking] = useState<{ save: true } | { remove: SavedViewDto } | null>(null);
  const changed = () => void qc.invalidateQueries({ queryKey: viewKeys.page(page) });
  const save = useMutation({
    mutationFn: (name: string) => saveView({ name, page, query }),
    onSuccess: () => {
      changed();
      setAsking(null);
    },
  });
  const remove = useMutation({
    mutationFn: ({ view, reason }: { view: SavedViewDto; reason?: string }) => deleteView(view.id, reason),
    // Gone already (deleted by someone else meanwhile): the menu is read again either way.
    onSettled: changed,
    onSuccess: () => setAsking(null),
  });
  const close = () => {
    setAsking(null);
    save.reset();
    remove.reset();
  };
  // The applied filters in words, for the dialog (the dead letter's status is always failed).
  const filters = filtersFromParams(params);
  const conditions = filterConditions(filterKey(page === 'dead-letter' ? { ...filters, status: undefined } : filters)).map(conditionText);
  return (
    <>
      <ViewMenu
        views={views.data?.views}
        loadError={views.isError && !views.data ? views.error.message : null}
        activeId={views.data?.views.find((v) => v.query === query)?.id ?? null}
        saveWhy={roleRefusal('view.save', role)}
        onOpen={() => void views.refetch()}
        onSave={() => {
          save.reset();
          setAsking({ save: true });
        }}
        onDelete={(v) => {
          remove.reset();
          setAsking({ remove: v });
        }}
      />
      {asking && 'save' in asking && (
        <SaveViewDialog
          page={VIEW_PAGE_PATHS[page]}
          conditions={conditions}
          pending={save.isPending}
          error={save.isError ? save.error.message : null}
          onSave={(name) => save.mutate(name)}
          onClose={close}
        />
      )}
      {asking && 'remove' in asking && (
        <DeleteViewDialog
          view={asking.remove}
          pending={remove.isPending}
          error={remove.isError ? remove.error.message : null}
          onConfirm={(reason) => remove.mutate({ view: asking.remove, reason })}
          onClose={close}
        />
      )}
    </>
  );
}
