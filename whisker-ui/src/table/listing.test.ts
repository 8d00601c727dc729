import { describe, expect, it } from 'vitest';
import { Listing } from './listing';
import { flow } from '../testdata';

describe('Listing', () => {
  it('drops repeated ids from overlapping pages', () => {
    const l = new Listing();
    expect(l.add(flow({ id: '1' }))).toBe(true);
    expect(l.add(flow({ id: '1' }))).toBe(false);
    expect(l.add(flow({ id: '2' }))).toBe(true);
    expect(l.size).toBe(2);
  });
  it('a streamed bucket inside a listed row is covered; a later bucket or another key is not', () => {
    const l = new Listing();
    l.add(flow({ id: '7', start_time: '2026-12-01T18:00:00Z', end_time: '2026-12-01T18:00:30Z' }));
    expect(l.covers(flow({ id: '7', start_time: '2026-12-01T18:00:15Z', end_time: '2026-12-01T18:00:30Z' }))).toBe(true);
    expect(l.covers(flow({ id: '7', start_time: '2026-12-01T18:00:30Z', end_time: '2026-12-01T18:00:45Z' }))).toBe(false);
    expect(l.covers(flow({ id: '8', start_time: '2026-12-01T18:00:15Z', end_time: '2026-12-01T18:00:30Z' }))).toBe(false);
    l.clear();
    expect(l.covers(flow({ id: '7', start_time: '2026-12-01T18:00:15Z', end_time: '2026-12-01T18:00:30Z' }))).toBe(false);
  });
});
