import { describe, expect, it } from 'vitest';
import { scrollToRow, virtualWindow } from './virtual';

describe('virtualWindow', () => {
  it('top of the list: visible rows plus overscan below', () => {
    expect(virtualWindow(0, 100, 20, 1000, 3)).toEqual({ start: 0, end: 8, offset: 0, total: 20000 });
  });
  it('middle, partially visible rows on both edges', () => {
    // scrollTop 210: row 10 is half hidden, rows 10..15 visible (210..310)
    expect(virtualWindow(210, 100, 20, 1000, 2)).toEqual({ start: 8, end: 18, offset: 160, total: 20000 });
  });
  it('DOM rows stay bounded by the viewport whatever the row count', () => {
    for (const count of [10, 1000, 20000, 1_000_000]) {
      for (const top of [0, 5000, 123456, 10 ** 9]) {
        const w = virtualWindow(top, 600, 24, count, 5);
        expect(w.end - w.start).toBeLessThanOrEqual(Math.ceil(600 / 24) + 1 + 10);
        expect(w.end).toBeLessThanOrEqual(count);
        expect(w.start).toBeGreaterThanOrEqual(0);
      }
    }
  });
  it('scrolled past the end clamps to the last rows', () => {
    const w = virtualWindow(1e9, 100, 20, 50, 0);
    expect(w.end).toBe(50);
    expect(w.start).toBe(45);
  });
  it('fewer rows than the viewport renders them all', () => {
    expect(virtualWindow(0, 1000, 20, 7, 3)).toEqual({ start: 0, end: 7, offset: 0, total: 140 });
  });
  it('empty list and bad row height', () => {
    expect(virtualWindow(0, 100, 20, 0, 3)).toEqual({ start: 0, end: 0, offset: 0, total: 0 });
    expect(() => virtualWindow(0, 100, 0, 10, 0)).toThrow(/rowHeight/);
  });
});

describe('scrollToRow', () => {
  it('scrolls only when the row is out of view', () => {
    expect(scrollToRow(100, 100, 20, 6)).toBe(100); // row 6 at 120..140: visible
    expect(scrollToRow(100, 100, 20, 2)).toBe(40); // above
    expect(scrollToRow(100, 100, 20, 10)).toBe(120); // below: bottom aligned
  });
});
