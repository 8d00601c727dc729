// Shapes policies/statistics (groupBy PolicyRule, timeSeries) into one entry per policy with
// its rules, totals and a per-bucket allowed/denied/passed series.

import type { Policy, PolicyStat } from '../api/types';

export interface SeriesPoint {
  t: string;
  allowed: number;
  denied: number;
  passed: number;
}
export interface RuleStats {
  key: string;
  ruleIndex: number;
  direction: string;
  action: string;
  allowed: number;
  denied: number;
  passed: number;
  series: SeriesPoint[];
}
export interface PolicyStats {
  key: string;
  policy: Pick<Policy, 'kind' | 'tier' | 'namespace' | 'name'>;
  allowed: number;
  denied: number;
  passed: number;
  rules: RuleStats[];
  series: SeriesPoint[];
}

const at = (a: number[] | undefined, i: number) => (a && i < a.length ? a[i] : 0);
const sum = (a: number[] | undefined) => (a ? a.reduce((x, y) => x + y, 0) : 0);

export function policyKey(p: Pick<Policy, 'kind' | 'tier' | 'namespace' | 'name'>): string {
  return [p.kind, p.tier, p.namespace, p.name].join('|');
}

export function seriesOf(s: PolicyStat): SeriesPoint[] {
  const n = Math.max(s.x?.length ?? 0, s.allowed_in?.length ?? 0, s.denied_in?.length ?? 0, s.passed_in?.length ?? 0);
  const out: SeriesPoint[] = [];
  for (let i = 0; i < n; i++) {
    out.push({
      t: s.x?.[i] ?? String(i),
      allowed: at(s.allowed_in, i) + at(s.allowed_out, i),
      denied: at(s.denied_in, i) + at(s.denied_out, i),
      passed: at(s.passed_in, i) + at(s.passed_out, i),
    });
  }
  return out;
}

/** Adds b into a point by point, matching on time. */
function mergeSeries(a: SeriesPoint[], b: SeriesPoint[]): SeriesPoint[] {
  const m = new Map<string, SeriesPoint>();
  for (const p of [...a, ...b]) {
    const q = m.get(p.t);
    if (q) {
      q.allowed += p.allowed;
      q.denied += p.denied;
      q.passed += p.passed;
    } else m.set(p.t, { ...p });
  }
  return [...m.values()].sort((x, y) => (x.t < y.t ? -1 : x.t > y.t ? 1 : 0));
}

export function shapeStats(items: readonly PolicyStat[]): PolicyStats[] {
  const byPolicy = new Map<string, PolicyStats>();
  for (const s of items) {
    const p = s.policy;
    const key = policyKey(p);
    let ps = byPolicy.get(key);
    if (!ps) {
      ps = { key, policy: { kind: p.kind, tier: p.tier, namespace: p.namespace, name: p.name }, allowed: 0, denied: 0, passed: 0, rules: [], series: [] };
      byPolicy.set(key, ps);
    }
    const series = seriesOf(s);
    const rule: RuleStats = {
      key: key + '|' + s.direction + '|' + p.rule_index + '|' + p.action,
      ruleIndex: p.rule_index,
      direction: s.direction,
      action: p.action,
      allowed: sum(s.allowed_in) + sum(s.allowed_out),
      denied: sum(s.denied_in) + sum(s.denied_out),
      passed: sum(s.passed_in) + sum(s.passed_out),
      series,
    };
    ps.rules.push(rule);
    ps.allowed += rule.allowed;
    ps.denied += rule.denied;
    ps.passed += rule.passed;
    ps.series = mergeSeries(ps.series, series);
  }
  const out = [...byPolicy.values()];
  for (const ps of out) {
    ps.rules.sort((a, b) => a.direction.localeCompare(b.direction) || a.ruleIndex - b.ruleIndex);
  }
  // Busiest policy first; ties by key for a stable order.
  out.sort((a, b) => b.allowed + b.denied + b.passed - (a.allowed + a.denied + a.passed) || a.key.localeCompare(b.key));
  return out;
}

/** Bar geometry for a stacked allowed/denied/passed chart of the given size. */
export function stackedBars(series: readonly SeriesPoint[], width: number, height: number) {
  const max = Math.max(1, ...series.map((p) => p.allowed + p.denied + p.passed));
  const w = series.length === 0 ? 0 : width / series.length;
  return series.map((p, i) => {
    const ha = (p.allowed / max) * height;
    const hd = (p.denied / max) * height;
    const hp = (p.passed / max) * height;
    return {
      x: i * w,
      w: Math.max(1, w - 1),
      allowed: { y: height - ha, h: ha },
      denied: { y: height - ha - hd, h: hd },
      passed: { y: height - ha - hd - hp, h: hp },
      point: p,
    };
  });
}

/** Sums runs of consecutive points so a series has at most maxBars points (t of each run's first). */
export function rebin(series: readonly SeriesPoint[], maxBars: number): SeriesPoint[] {
  if (maxBars < 1) throw new Error('maxBars must be >= 1, was ' + maxBars);
  const k = Math.ceil(series.length / maxBars);
  if (k <= 1) return [...series];
  const out: SeriesPoint[] = [];
  for (let i = 0; i < series.length; i += k) {
    const run = series.slice(i, i + k);
    out.push({
      t: run[0].t,
      allowed: run.reduce((a, p) => a + p.allowed, 0),
      denied: run.reduce((a, p) => a + p.denied, 0),
      passed: run.reduce((a, p) => a + p.passed, 0),
    });
  }
  return out;
}

/**
 * Readable charts: drops the buckets before the first one with any traffic in any policy (the
 * same cut for all, so charts stay comparable), then rebins to at most maxBars.
 */
export function compactStats(stats: readonly PolicyStats[], maxBars: number): PolicyStats[] {
  let first: string | null = null;
  for (const p of stats) {
    for (const q of p.series) {
      if (q.allowed + q.denied + q.passed > 0) {
        if (first === null || q.t < first) first = q.t;
        break;
      }
    }
  }
  const cut = (s: SeriesPoint[]) => rebin(first === null ? s : s.filter((q) => q.t >= first!), maxBars);
  return stats.map((p) => ({ ...p, series: cut(p.series), rules: p.rules.map((r) => ({ ...r, series: cut(r.series) })) }));
}
