import { describe, expect, it } from 'vitest';
import { compactStats, rebin, seriesOf, shapeStats, stackedBars } from './series';
import type { PolicyStat } from '../api/types';

function stat(name: string, rule: number, direction: string, al: number[], de: number[], x: string[]): PolicyStat {
  return {
    policy: { kind: 'CalicoNetworkPolicy', tier: 'default', namespace: 'demo-b', name, action: 'Allow', policy_index: 0, rule_index: rule, trigger: null },
    direction, group_by: 'PolicyRule', type: 'PacketCount',
    allowed_in: al, allowed_out: al.map(() => 1), denied_in: de, denied_out: de.map(() => 0), passed_in: [], passed_out: [], x,
  };
}
const X = ['2026-12-01T18:00:00Z', '2026-12-01T18:00:15Z'];

describe('shapeStats', () => {
  it('groups rules under their policy with totals and merged series, busiest first', () => {
    const out = shapeStats([
      stat('quiet', 0, 'Ingress', [1, 0], [0, 0], X),
      stat('busy', 1, 'Ingress', [5, 5], [2, 0], X),
      stat('busy', 0, 'Egress', [3, 0], [0, 4], X),
    ]);
    expect(out.map((p) => p.policy.name)).toEqual(['busy', 'quiet']);
    const busy = out[0];
    expect(busy.rules.map((r) => [r.direction, r.ruleIndex])).toEqual([['Egress', 0], ['Ingress', 1]]);
    expect(busy.allowed).toBe(5 + 5 + 2 + 3 + 0 + 2); // allowed_in + allowed_out(1 per bucket)
    expect(busy.denied).toBe(6);
    expect(busy.series).toEqual([
      { t: X[0], allowed: 5 + 1 + 3 + 1, denied: 2, passed: 0 },
      { t: X[1], allowed: 5 + 1 + 0 + 1, denied: 4, passed: 0 },
    ]);
  });
  it('missing arrays count as zero', () => {
    const s = stat('p', 0, 'Ingress', [2], [], ['t0']);
    expect(seriesOf({ ...s, denied_in: undefined as unknown as number[] })).toEqual([{ t: 't0', allowed: 3, denied: 0, passed: 0 }]);
  });
});

describe('stackedBars', () => {
  it('scales to the tallest bucket and stacks denied on allowed', () => {
    const bars = stackedBars([{ t: 'a', allowed: 5, denied: 5, passed: 0 }, { t: 'b', allowed: 2, denied: 0, passed: 3 }], 100, 50);
    expect(bars[0].allowed).toEqual({ y: 25, h: 25 });
    expect(bars[0].denied).toEqual({ y: 0, h: 25 });
    expect(bars[1].passed.h).toBe(15);
    expect(bars[1].x).toBe(50);
  });
});

describe('rebin and compactStats', () => {
  const pt = (t: string, a: number, d = 0): { t: string; allowed: number; denied: number; passed: number } => ({ t, allowed: a, denied: d, passed: 0 });
  it('rebin sums consecutive runs and keeps totals', () => {
    const s = Array.from({ length: 10 }, (_, i) => pt('t' + String(i).padStart(2, '0'), i, 1));
    const r = rebin(s, 4);
    expect(r.map((p) => p.t)).toEqual(['t00', 't03', 't06', 't09']);
    expect(r.map((p) => p.allowed)).toEqual([0 + 1 + 2, 3 + 4 + 5, 6 + 7 + 8, 9]);
    expect(r.reduce((a, p) => a + p.denied, 0)).toBe(10);
    expect(rebin(s, 20)).toEqual(s);
    expect(() => rebin(s, 0)).toThrow(/maxBars/);
  });
  it('compactStats cuts the common empty start', () => {
    const out = compactStats(shapeStats([
      stat('a', 0, 'Ingress', [0, 0, 3, 1], [0, 0, 0, 0], ['t0', 't1', 't2', 't3']),
      stat('b', 0, 'Ingress', [0, 0, 0, 0], [0, 2, 0, 0], ['t0', 't1', 't2', 't3']),
    ].map((s) => ({ ...s, allowed_out: [0, 0, 0, 0] }))), 60);
    for (const p of out) expect(p.series.map((q) => q.t)).toEqual(['t1', 't2', 't3']);
    expect(out.find((p) => p.policy.name === 'a')!.rules[0].series.map((q) => q.allowed)).toEqual([0, 3, 1]);
  });
});
