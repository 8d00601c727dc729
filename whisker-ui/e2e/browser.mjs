// Browser test of whisker-ui against a running whisker-backend (+ goldmane) — run by
// calico.whisker.browser.WhiskerBrowserTest, or by hand:
//   WHISKER_URL=http://127.0.0.1:3002/ WHISKER_TOKEN=... SCREENSHOT_DIR=/tmp/shots node e2e/browser.mjs
// Exits non-zero with a message naming the failed check.
import fs from 'node:fs';
import path from 'node:path';
import { env, fail, launch, waitFor } from './lib.mjs';

const url = env('WHISKER_URL');
const token = env('WHISKER_TOKEN');
const shots = env('SCREENSHOT_DIR');
const liveTimeout = Number(process.env.LIVE_TIMEOUT_MS || 90000);
fs.mkdirSync(shots, { recursive: true });

const { page, problems, close } = await launch();
const step = async (name, fn) => {
  const t0 = Date.now();
  try {
    await fn();
    console.log(`ok   ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    await page.screenshot({ path: path.join(shots, 'failure-' + name.replace(/\W+/g, '-') + '.png') }).catch(() => {});
    await close();
    fail(`${name}: ${e.message}`);
  }
};
const shot = (name) => page.screenshot({ path: path.join(shots, name + '.png') });
const rowCount = () => page.locator('.ft-row').count();
const probe = () => page.evaluate(() => ({ ...window.whisker }));

await step('table fills and the token leaves the address bar', async () => {
  await page.goto(url + '#token=' + encodeURIComponent(token));
  await waitFor(page, 'flow rows', () => window.whisker && window.whisker.loadDone && document.querySelectorAll('.ft-row').length > 0);
  if (page.url().includes(token)) throw new Error('the token is still in the URL: ' + page.url());
  const p = await probe();
  if (p.total < 100) throw new Error(`expected several hundred flows, the backend reports ${p.total}`);
  const dom = await rowCount();
  if (dom > 80) throw new Error(`${dom} rows in the DOM for ${p.loadedRows} loaded: the table is not virtualised`);
  await shot('table');
});

let allTotal = 0;
await step('an action filter narrows the rows and is kept in the URL', async () => {
  allTotal = (await probe()).total;
  await page.click('[data-testid="f-actions-Deny"]');
  await waitFor(page, 'actions=Deny in the URL', () => location.search.includes('actions=Deny'));
  await waitFor(page, 'filtered load', () => window.whisker.loadDone && document.querySelectorAll('.ft-row').length > 0);
  const p = await probe();
  if (!(p.total > 0 && p.total < allTotal)) throw new Error(`Deny filter: ${p.total} flows of ${allTotal}`);
  const verdicts = await page.locator('.ft-row .c-action').allInnerTexts();
  if (verdicts.some((v) => v !== 'Deny')) throw new Error('non-Deny rows under the Deny filter: ' + [...new Set(verdicts)]);
  await page.reload();
  await waitFor(page, 'filter after reload', () => window.whisker.loadDone && document.querySelector('[data-testid="f-actions-Deny"]').getAttribute('aria-pressed') === 'true');
  // Flows keep arriving (the harness feeds live traffic), so the total may only grow.
  const after = await probe();
  if (after.total < p.total) throw new Error('reload lost the filter');
  const again = await page.locator('.ft-row .c-action').allInnerTexts();
  if (again.length === 0 || again.some((v) => v !== 'Deny')) throw new Error('after reload: rows are not all Deny: ' + [...new Set(again)]);
  await shot('filtered');
  await page.goBack();
  await waitFor(page, 'unfiltered after back', (t) => !location.search.includes('actions') && window.whisker.loadDone && window.whisker.total >= t, allTotal);
});

await step('a namespace filter typed with autocomplete narrows the rows', async () => {
  const input = page.locator('[data-testid="f-source_namespaces"]');
  await input.click();
  await waitFor(page, 'namespace hints', () => [...document.querySelectorAll('datalist option')].some((o) => o.value !== ''));
  const hints = await page.evaluate(() => [...document.activeElement.list.options].map((o) => o.value));
  const ns = hints.find((h) => h !== '') ;
  await input.fill(ns);
  await input.press('Enter');
  await waitFor(page, 'source_namespaces in the URL', (v) => new URLSearchParams(location.search).getAll('source_namespaces').includes(v), ns);
  // loadDone may still be the unfiltered load's for a moment (the table empties, then fills):
  // wait for filtered rows to be there, then check that no other namespace is among them.
  // (A filter that lets other namespaces through times out here and fails on the check below.)
  await waitFor(page, 'namespace-filtered rows', (v) => {
    const els = [...document.querySelectorAll('.ft-row .c-ns')].filter((_, i) => i % 2 === 0);
    return window.whisker.loadDone && els.length > 0 && els.every((e) => e.textContent === v);
  }, ns).catch(() => {});
  const cells = await page.locator('.ft-row .c-ns').evaluateAll((els) => els.filter((_, i) => i % 2 === 0).map((e) => e.textContent));
  if (cells.length === 0 || cells.some((c) => c !== ns)) throw new Error(`rows outside ${ns}: ${[...new Set(cells)]}`);
  await page.goBack();
  await waitFor(page, 'unfiltered after back', () => location.search === '' && window.whisker.loadDone);
});

await step('sorting by a column is done by the backend and kept in the URL', async () => {
  await page.click('[data-testid="sort-SourceName"]');
  await waitFor(page, 'sort=SourceName in the URL', () => location.search.includes('sort=SourceName'));
  await waitFor(page, 'sorted load', () => window.whisker.loadDone && document.querySelectorAll('.ft-row').length > 0);
  const names = await page.locator('.ft-row .c-name').evaluateAll((els) => els.filter((_, i) => i % 2 === 0).map((e) => e.textContent));
  const sorted = [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (names.join() !== sorted.join()) throw new Error('source names not ascending: ' + names.slice(0, 8));
  await page.goBack();
  await waitFor(page, 'time order after back', () => location.search === '' && window.whisker.loadDone);
});

await step('details panel shows the policies of a flow', async () => {
  // A Pass flow shows the most: a tier hand-over, an end-of-tier hit with its trigger, pending policies.
  const pass = page.locator('.ft-row', { has: page.locator('.verdict.v-Pass') });
  await ((await pass.count()) > 0 ? pass.first() : page.locator('.ft-row').first()).click();
  await waitFor(page, 'details panel', () => document.querySelector('[data-testid="details"]'));
  const enforced = await page.locator('[data-testid="enforced"] tbody tr').count();
  if (enforced < 1) throw new Error('no enforced policy rows in the details panel');
  // find a flow with pending policies too
  const rows = await rowCount();
  for (let i = 0; i < Math.min(rows, 30); i++) {
    if ((await page.locator('[data-testid="pending"] tbody tr').count()) > 0) break;
    await page.locator('.ft-row').nth(i).click();
  }
  if ((await page.locator('[data-testid="pending"] tbody tr').count()) < 1) throw new Error('no flow with pending policies among the first rows');
  await shot('details');
  await page.click('[aria-label="Close details"]');
});

await step('live mode streams new flows, pause buffers them', async () => {
  const before = await probe();
  const firstId = await page.locator('.ft-row').first().getAttribute('data-flow-id');
  await page.click('[data-testid="live-play"]');
  await waitFor(page, 'live flows in the table', (n) => window.whisker.liveRendered > n, before.liveRendered, liveTimeout);
  const top = await page.locator('.ft-row').first().getAttribute('data-flow-id');
  if (top === firstId) throw new Error('live flows did not prepend');
  // A bucket the listing already counted must not come back as a second row.
  const seen = await page.locator('.ft-row').evaluateAll((els) => els.map((e) => e.dataset.flowId + ' ' + e.querySelector('.c-time').textContent));
  const dup = seen.find((k, i) => seen.indexOf(k) !== i);
  if (dup) throw new Error('duplicate row (id, start) after live mode: ' + dup);
  await shot('live');
  await page.click('[data-testid="live-pause"]');
  const shown = await page.evaluate(() => window.whisker.liveRendered);
  await waitFor(page, 'a buffered flow while paused', () => window.whisker.liveBuffered > 0, undefined, liveTimeout);
  if ((await page.evaluate(() => window.whisker.liveRendered)) !== shown) throw new Error('rows were added while paused');
  await page.click('[data-testid="live-pause"]');
  await waitFor(page, 'buffer flushed after resume', () => window.whisker.liveBuffered === 0 && window.whisker.liveRendered > 0);
  await page.click('[data-testid="live-stop"]');
});

await step('graph renders nodes and verdict-coloured edges', async () => {
  await page.click('[data-testid="tab-graph"]');
  await waitFor(page, 'graph nodes', () => document.querySelectorAll('svg.graph .node').length > 1);
  const colours = await page.locator('svg.graph path.edge').evaluateAll((els) => [...new Set(els.map((e) => e.getAttribute('stroke')))]);
  if (!colours.includes('#2f9e55') || !colours.includes('#d9453b')) throw new Error('edge colours: ' + colours);
  const node = page.locator('svg.graph .node').first();
  await node.hover();
  await waitFor(page, 'hover tooltip', () => document.querySelector('[data-testid="graph-tooltip"]'));
  await page.mouse.move(5, 895);
  await shot('graph');
});

await step('policy view renders rule statistics and filters the table', async () => {
  await page.click('[data-testid="tab-policies"]');
  await waitFor(page, 'policy cards', () => document.querySelectorAll('[data-testid="policy-card"]').length > 0);
  const bars = await page.locator('[data-testid="policy-card"] svg.bars rect').count();
  if (bars === 0) throw new Error('no bars in the policy charts');
  await shot('policies');
  await page.locator('[data-testid="policy-card"] header button').first().click();
  await waitFor(page, 'policy filter in the URL', () => location.search.includes('policies=') && !location.search.includes('view='));
  await waitFor(page, 'policy-filtered rows', () => window.whisker.loadDone && document.querySelectorAll('.ft-row').length > 0);
});

await step('a backend error shows its message', async () => {
  // Port 0 passes the UI's URL parsing but the backend rejects it (400 naming the field).
  await page.goto(url + '?dest_ports=0');
  await waitFor(page, 'error banner', () => document.querySelector('[data-testid="error"]'));
  const text = await page.locator('[data-testid="error"]').innerText();
  if (!/port/i.test(text)) throw new Error('error banner without the backend message: ' + text);
  await shot('error');
});

await step('without a token the first 401 asks for one', async () => {
  const fresh = await page.context().newPage(); // a new tab: its own, empty sessionStorage
  try {
    await fresh.goto(url);
    await waitFor(fresh, 'sign-in dialog', () => document.querySelector('[data-testid="login"]'));
    await fresh.fill('[data-testid="login-token"]', 'wrong-' + token);
    await fresh.click('[data-testid="login"] button[type="submit"]');
    await waitFor(fresh, 'refusal message', () => /refused/.test(document.querySelector('[data-testid="login"]')?.textContent ?? ''));
    await fresh.fill('[data-testid="login-token"]', token);
    await fresh.click('[data-testid="login"] button[type="submit"]');
    await waitFor(fresh, 'rows after sign-in', () => !document.querySelector('[data-testid="login"]') && document.querySelectorAll('.ft-row').length > 0);
    if (fresh.url().includes(token)) throw new Error('token in the URL after sign-in');
  } finally {
    await fresh.close();
  }
});

await step('no CSP violations or page errors', async () => {
  if (problems.length > 0) throw new Error(problems.join('; '));
});

await close();
console.log('browser checks passed; screenshots in ' + shots);
