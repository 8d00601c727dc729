import { useEffect, useMemo, useState } from 'react';
import type { Api } from '../api/client';
import { fmtCount } from '../format';
import { VERDICT_COLOURS } from '../graph/model';
import { compactStats, shapeStats, stackedBars, type PolicyStats, type SeriesPoint } from './series';

const TYPES = ['PacketCount', 'ByteCount', 'LiveConnectionCount'] as const;

function Bars(props: { series: SeriesPoint[]; width: number; height: number }) {
  const bars = stackedBars(props.series, props.width, props.height);
  return (
    <svg className="bars" width={props.width} height={props.height} viewBox={`0 0 ${props.width} ${props.height}`}>
      <line x1={0} x2={props.width} y1={props.height - 0.5} y2={props.height - 0.5} className="axis" />
      {bars.map((b) => (
        <g key={b.point.t}>
          <title>{`${b.point.t}: allowed ${b.point.allowed}, denied ${b.point.denied}, passed ${b.point.passed}`}</title>
          {b.allowed.h > 0 && <rect x={b.x} y={b.allowed.y} width={b.w} height={b.allowed.h} fill={VERDICT_COLOURS.Allow} />}
          {b.denied.h > 0 && <rect x={b.x} y={b.denied.y} width={b.w} height={b.denied.h} fill={VERDICT_COLOURS.Deny} />}
          {b.passed.h > 0 && <rect x={b.x} y={b.passed.y} width={b.w} height={b.passed.h} fill={VERDICT_COLOURS.Pass} />}
        </g>
      ))}
    </svg>
  );
}

function Totals(props: { a: number; d: number; p: number }) {
  return (
    <span className="totals">
      <span className="t-allow">{fmtCount(props.a)}</span> / <span className="t-deny">{fmtCount(props.d)}</span> / <span className="t-pass">{fmtCount(props.p)}</span>
    </span>
  );
}

/** Per-policy statistics: rules that match, how much, allowed vs denied over time. */
export function PolicyView(props: { api: Api; params: URLSearchParams; onSelect: (p: PolicyStats) => void; onError: (e: unknown) => void }) {
  const { api, params, onSelect, onError } = props;
  const [type, setType] = useState<(typeof TYPES)[number]>('PacketCount');
  const [stats, setStats] = useState<PolicyStats[] | null>(null);
  const [loadedAt, setLoadedAt] = useState(0);
  const key = params.toString();
  useEffect(() => {
    const ctl = new AbortController();
    const p = new URLSearchParams();
    // policies/statistics takes only the time range, not the flow filters.
    for (const k of ['startTimeGte', 'startTimeLt']) { const v = params.get(k); if (v) p.set(k, v); }
    p.set('groupBy', 'PolicyRule');
    p.set('timeSeries', 'true');
    p.set('type', type);
    api.statistics(p, ctl.signal)
      .then((r) => setStats(shapeStats(r.items)))
      .catch((e) => { if (!ctl.signal.aborted) onError(e); });
    return () => ctl.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [api, key, type, loadedAt, onError]);
  const list = useMemo(() => compactStats(stats ?? [], 60), [stats]);

  return (
    <div className="policy-view" data-testid="policy-view">
      <div className="graph-tools">
        <span>{stats === null ? 'loading…' : `${list.length} policies · ${list.reduce((a, p) => a + p.rules.length, 0)} rules`}</span>
        <label>Count <select value={type} onChange={(e) => setType(e.target.value as (typeof TYPES)[number])}>{TYPES.map((t) => <option key={t}>{t}</option>)}</select></label>
        <button className="btn" onClick={() => setLoadedAt(Date.now())}>Refresh</button>
        <span className="legend">allowed / denied / passed
          {Object.entries(VERDICT_COLOURS).map(([a, c]) => <span key={a}><i style={{ background: c }} />{a}</span>)}
        </span>
      </div>
      <div className="policy-list">
        {list.map((p) => (
          <section key={p.key} className="policy-card" data-testid="policy-card">
            <header>
              <button className="btn-link strong" title="Show this policy's flows" onClick={() => onSelect(p)}>
                {p.policy.tier ? p.policy.tier + ' / ' : ''}{p.policy.namespace ? p.policy.namespace + ' / ' : ''}{p.policy.name || (p.policy.kind === 'EndOfTier' ? 'end of tier' : '(no name)')}
              </button>
              <span className="muted">{p.policy.kind}</span>
              <Totals a={p.allowed} d={p.denied} p={p.passed} />
              <Bars series={p.series} width={220} height={34} />
            </header>
            <table className="mini">
              <thead><tr><th>Direction</th><th>Rule</th><th>Rule action</th><th>Allowed / denied / passed</th><th>Over time</th></tr></thead>
              <tbody>
                {p.rules.map((r) => (
                  <tr key={r.key}>
                    <td>{r.direction}</td>
                    <td>{r.ruleIndex < 0 ? 'end of tier' : '#' + r.ruleIndex}</td>
                    <td><span className={'verdict v-' + r.action}>{r.action}</span></td>
                    <td><Totals a={r.allowed} d={r.denied} p={r.passed} /></td>
                    <td><Bars series={r.series} width={160} height={18} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        ))}
        {stats !== null && list.length === 0 && <div className="empty">No policy statistics in this time range.</div>}
      </div>
    </div>
  );
}
