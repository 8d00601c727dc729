import { describe, expect, it } from 'vitest';
import { ApiError, loadAllFlows, type PageSource } from './client';
import type { FlowResponse } from './types';
import { flow } from '../testdata';

/** Paging as the backend does it: offset page × pageSize, sizes above max rejected with 400. */
function server(n: number, maxPageSize: number): { source: PageSource; sizes: number[] } {
  const all = Array.from({ length: n }, (_, i) => flow({ id: String(i) }));
  const sizes: number[] = [];
  const source: PageSource = async (page, pageSize) => {
    sizes.push(pageSize);
    if (pageSize > maxPageSize) throw new ApiError(400, `goldmane rejected the request: page_size: ${pageSize} is above ${maxPageSize}`);
    return { meta: { totalResults: n, totalPages: Math.ceil(n / pageSize) }, items: all.slice(page * pageSize, (page + 1) * pageSize) };
  };
  return { source, sizes };
}

async function load(source: PageSource, first: number, size: number, max = 1e6) {
  const seen = new Set<string>();
  const pages: { count: number; done: boolean }[] = [];
  await loadAllFlows(source, first, size, max, (items: FlowResponse[], _total, done) => {
    items.forEach((f) => seen.add(f.id));
    pages.push({ count: items.length, done });
  });
  return { seen, pages };
}

describe('loadAllFlows', () => {
  it('small first page, then every row in big pages, done exactly once at the end', async () => {
    const s = server(2500, 1000);
    const { seen, pages } = await load(s.source, 100, 1000);
    expect(seen.size).toBe(2500);
    expect(s.sizes).toEqual([100, 1000, 1000, 1000]);
    expect(pages.map((p) => p.done)).toEqual([false, false, false, true]);
  });
  it('one page is enough when the first covers everything', async () => {
    const s = server(42, 1000);
    const { seen, pages } = await load(s.source, 100, 1000);
    expect(seen.size).toBe(42);
    expect(pages).toEqual([{ count: 42, done: true }]);
  });
  it('halves a pageSize the server refuses and still loads every row', async () => {
    const s = server(1000, 300);
    const { seen } = await load(s.source, 100, 1000);
    expect(seen.size).toBe(1000);
    expect(s.sizes.slice(0, 4)).toEqual([100, 1000, 500, 250]);
  });
  it('stops at maxRows', async () => {
    const s = server(5000, 1000);
    const { seen } = await load(s.source, 100, 1000, 2000);
    expect(seen.size).toBe(2000);
  });
  it('other errors are not retried', async () => {
    const failing: PageSource = async () => { throw new ApiError(503, 'goldmane unreachable'); };
    await expect(load(failing, 100, 1000)).rejects.toThrow('goldmane unreachable');
  });
});
