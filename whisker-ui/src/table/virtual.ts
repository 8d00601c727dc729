// Window math of the virtual list: which rows are in the DOM for a scroll position.

export interface VirtualWindow {
  /** first rendered row (inclusive) */
  start: number;
  /** last rendered row (exclusive) */
  end: number;
  /** px from the top of the scroll content to the first rendered row */
  offset: number;
  /** px height of the whole list */
  total: number;
}

export function virtualWindow(
  scrollTop: number,
  viewportHeight: number,
  rowHeight: number,
  count: number,
  overscan: number,
): VirtualWindow {
  if (rowHeight <= 0) throw new Error('rowHeight must be > 0, was ' + rowHeight);
  const total = count * rowHeight;
  if (count === 0 || viewportHeight <= 0) return { start: 0, end: 0, offset: 0, total };
  const maxTop = Math.max(0, total - viewportHeight);
  const top = Math.min(Math.max(0, scrollTop), maxTop);
  const first = Math.floor(top / rowHeight);
  const visible = Math.ceil((top + viewportHeight) / rowHeight) - first;
  const start = Math.max(0, first - overscan);
  const end = Math.min(count, first + visible + overscan);
  return { start, end, offset: start * rowHeight, total };
}

/** The scrollTop that brings a row fully into view (unchanged when already visible). */
export function scrollToRow(scrollTop: number, viewportHeight: number, rowHeight: number, row: number): number {
  const top = row * rowHeight;
  if (top < scrollTop) return top;
  if (top + rowHeight > scrollTop + viewportHeight) return top + rowHeight - viewportHeight;
  return scrollTop;
}
