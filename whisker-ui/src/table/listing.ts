// Live flows against the loaded listing. goldmane's list aggregates each key (same `id`) over
// every bucket in range, the open one included; the stream sends each key again per bucket
// as it closes. A streamed bucket inside a listed row's [start, end] is already counted there.

import type { FlowResponse } from '../api/types';

export interface Span {
  start: string;
  end: string;
}

export class Listing {
  private readonly spans = new Map<string, Span>();

  clear(): void {
    this.spans.clear();
  }

  /** Records a listed flow; returns false when its id was listed already (a page overlap). */
  add(f: FlowResponse): boolean {
    if (this.spans.has(f.id)) return false;
    this.spans.set(f.id, { start: f.start_time, end: f.end_time });
    return true;
  }

  /** True when a streamed flow repeats what a listed row already counts. RFC 3339 UTC strings order as times. */
  covers(f: FlowResponse): boolean {
    const s = this.spans.get(f.id);
    return s !== undefined && s.start <= f.start_time && f.end_time <= s.end;
  }

  get size(): number {
    return this.spans.size;
  }
}
