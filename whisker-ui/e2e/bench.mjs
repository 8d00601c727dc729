// Benchmark of whisker-ui in Debian's Chromium, measured in the page (Performance API):
// first page, all rows, scripted scroll, live mode under load. Run by
// calico.whisker.browser.WhiskerUiBench (bench/run.sh whisker-backend calico.whisker.browser.WhiskerUiBench),
// which fills goldmane and, once this script writes $BENCH_SIGNAL_DIR/live-started, feeds new
// flows at a fixed rate until it writes $BENCH_SIGNAL_DIR/live-done.
import fs from 'node:fs';
import path from 'node:path';
import { env, fail, launch, waitFor } from './lib.mjs';

const url = env('WHISKER_URL');
const token = env('WHISKER_TOKEN');
const signals = env('BENCH_SIGNAL_DIR');
const expectRows = Number(env('BENCH_EXPECT_ROWS', '20000'));

const { page, problems, close } = await launch();
const report = (k, v) => console.log(`${k.padEnd(34)} ${v}`);
const pct = (a, p) => { const s = [...a].sort((x, y) => x - y); return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : NaN; };
try {
  await page.goto(url + '#token=' + encodeURIComponent(token));
  await waitFor(page, `${expectRows} rows loaded`, (n) => window.whisker?.loadDone && window.whisker.loadedRows >= n, expectRows, 120000);
  const t = await page.evaluate(() => {
    const m = (n) => performance.getEntriesByName(n, 'mark').at(-1)?.startTime ?? NaN;
    return { first: m('whisker:first-page'), all: m('whisker:all-loaded'), start: m('whisker:load-start'), rows: window.whisker.loadedRows, total: window.whisker.total };
  });
  report('rows loaded / total', `${t.rows} / ${t.total}`);
  report('navigation → first page rendered', `${t.first.toFixed(0)} ms`);
  report('navigation → all rows rendered', `${t.all.toFixed(0)} ms`);
  report('first request → all rows', `${(t.all - t.start).toFixed(0)} ms`);

  // Scripted scroll: 400 px per frame down the whole list, frame times from requestAnimationFrame.
  const s = await page.evaluate(() => new Promise((resolve) => {
    const el = document.querySelector('[data-testid="flow-scroller"]');
    const frames = []; let maxRows = 0; let last = performance.now();
    performance.mark('whisker:scroll-start');
    const step = () => {
      const now = performance.now(); frames.push(now - last); last = now;
      maxRows = Math.max(maxRows, document.querySelectorAll('.ft-row').length);
      if (el.scrollTop + el.clientHeight >= el.scrollHeight - 1 || frames.length > 3000) {
        performance.measure('whisker:scroll', 'whisker:scroll-start');
        resolve({ frames: frames.slice(1), maxRows, px: el.scrollTop, ms: performance.getEntriesByName('whisker:scroll').at(-1).duration });
        return;
      }
      el.scrollTop += 400;
      requestAnimationFrame(step);
    };
    requestAnimationFrame(step);
  }));
  report('scroll: frames / distance', `${s.frames.length} frames over ${Math.round(s.px)} px in ${s.ms.toFixed(0)} ms`);
  report('scroll: frame time p50 / p95 / max', `${pct(s.frames, 0.5).toFixed(1)} / ${pct(s.frames, 0.95).toFixed(1)} / ${Math.max(...s.frames).toFixed(1)} ms`);
  report('scroll: frames > 33 ms (janky)', `${s.frames.filter((f) => f > 33.4).length}`);
  report('scroll: max rows in the DOM', `${s.maxRows}`);

  // Graph of all rows: build + layout + first SVG paint.
  const gr = await page.evaluate(() => new Promise((resolve) => {
    const t0 = performance.now();
    document.querySelector('[data-testid="tab-graph"]').click();
    const poll = () => {
      const nodes = document.querySelectorAll('svg.graph .node').length;
      if (nodes > 0) {
        requestAnimationFrame(() => resolve({ ms: performance.now() - t0, nodes, edges: document.querySelectorAll('svg.graph path.edge').length,
          info: document.querySelector('.graph-tools span').textContent }));
      } else requestAnimationFrame(poll);
    };
    poll();
  }));
  report('graph of all rows rendered', `${gr.ms.toFixed(0)} ms (${gr.info})`);
  if (process.env.SCREENSHOT_DIR) await page.screenshot({ path: path.join(process.env.SCREENSHOT_DIR, 'graph-bench.png') });
  await page.click('[data-testid="tab-table"]');
  await waitFor(page, 'table again', () => window.whisker.loadDone && document.querySelectorAll('.ft-row').length > 0, undefined, 120000);

  // Live mode under load: the harness feeds flows once live-started exists.
  await page.evaluate(() => document.querySelector('[data-testid="flow-scroller"]').scrollTop = 0);
  await page.click('[data-testid="live-play"]');
  await page.waitForTimeout(1000);
  fs.writeFileSync(path.join(signals, 'live-started'), String(Date.now()));
  const samples = [];
  for (let i = 0; !fs.existsSync(path.join(signals, 'live-done')) && i < 600; i++) {
    await page.waitForTimeout(1000);
    samples.push(await page.evaluate(() => ({ t: performance.now(), rx: window.whisker.liveReceived, shown: window.whisker.liveRendered })));
  }
  const fed = Number(fs.readFileSync(path.join(signals, 'live-done'), 'utf8'));
  // Give the last goldmane buckets time to close and reach the page.
  const end = Date.now() + 20000;
  let last;
  do {
    await page.waitForTimeout(500);
    last = await page.evaluate(() => ({ rx: window.whisker.liveReceived, shown: window.whisker.liveRendered }));
  } while (last.shown < fed && Date.now() < end);
  const flushes = await page.evaluate(() => performance.getEntriesByName('whisker:live-flush').map((e) => e.duration));
  const rates = samples.slice(1).map((x, i) => ((x.shown - samples[i].shown) * 1000) / (x.t - samples[i].t));
  report('live: flows fed / received / shown', `${fed} / ${last.rx} / ${last.shown}`);
  report('live: shown per second p50 / max', `${pct(rates, 0.5).toFixed(0)} / ${Math.max(0, ...rates).toFixed(0)}`);
  report('live: flush+render p50 / p95 / max', `${pct(flushes, 0.5).toFixed(1)} / ${pct(flushes, 0.95).toFixed(1)} / ${Math.max(0, ...flushes).toFixed(1)} ms (${flushes.length} flushes)`);
  report('live: keeps up', last.shown >= fed ? 'yes (every fed flow shown)' : `NO (${fed - last.shown} missing after 20 s)`);
  if (problems.length) report('problems', problems.join('; '));
} catch (e) {
  await close();
  fail(e.message);
}
await close();
