/**
 * The browser tests' `test`: page.goto and page.reload return once React has hydrated the
 * page (`html[data-hydrated]`, set by app/providers.tsx), not at the load event. Next hydrates
 * after its chunks load, which can be after `load` on a busy machine, and a box filled or a
 * button clicked in between is typed into dead HTML (a CI run lost a filter that way).
 * `waitUntil: 'commit'` opts out, for a test that types before hydration on purpose.
 */
import { test as base, type Page, type Response } from '@playwright/test';

export { expect } from '@playwright/test';

async function hydrated(page: Page, res: Response | null) {
  // Only the console's pages: an API address or a file opened in the browser has no React.
  if (!res || !(res.headers()['content-type'] ?? '').startsWith('text/html')) return;
  await page.locator('html[data-hydrated]').waitFor({ state: 'attached' });
}

function waitForHydration(page: Page) {
  const goto = page.goto.bind(page);
  const reload = page.reload.bind(page);
  page.goto = async (url, options) => {
    const res = await goto(url, options);
    if (options?.waitUntil !== 'commit') await hydrated(page, res);
    return res;
  };
  page.reload = async (options) => {
    const res = await reload(options);
    if (options?.waitUntil !== 'commit') await hydrated(page, res);
    return res;
  };
}

export const test = base.extend({
  // Every page of the context: the test's `page` and any it opens with context.newPage().
  context: async ({ context }, use) => {
    context.on('page', waitForHydration);
    await use(context);
  },
});
