import type { FlowResponse, Policy } from '../api/types';
import { fmtBytes, fmtCount } from '../format';

function PolicyTable(props: { title: string; policies: Policy[]; testId: string }) {
  return (
    <section className="dp-section">
      <h3>{props.title} <span className="muted">({props.policies.length})</span></h3>
      {props.policies.length === 0 ? <div className="muted">none</div> : (
        <table className="mini policies" data-testid={props.testId}>
          <thead><tr><th>Tier</th><th>Policy</th><th>Rule</th><th>Action</th><th>Triggered by</th></tr></thead>
          <tbody>
            {props.policies.map((p, i) => (
              <tr key={i}>
                <td>{p.tier || '—'}</td>
                <td>
                  <span className="strong">{p.namespace ? p.namespace + '/' : ''}{p.name || (p.kind === 'EndOfTier' ? 'end of tier' : '—')}</span>
                  <div className="kind">{p.kind}</div>
                </td>
                <td>{p.rule_index < 0 ? '—' : p.rule_index}</td>
                <td><span className={'verdict v-' + p.action}>{p.action}</span></td>
                <td>{p.trigger ? `${p.trigger.tier}/${p.trigger.namespace ? p.trigger.namespace + '/' : ''}${p.trigger.name}` : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function Labels(props: { labels: string[] }) {
  if (props.labels.length === 0) return <span className="muted">none</span>;
  return <>{props.labels.map((l) => <span key={l} className="label">{l}</span>)}</>;
}

export function DetailsPanel(props: { flow: FlowResponse; onClose: () => void }) {
  const f = props.flow;
  const kv: [string, string][] = [
    ['Start / end (UTC)', `${f.start_time.replace('T', ' ').replace('Z', '')} → ${f.end_time.slice(11, 19)}`],
    ['Protocol / port', `${f.protocol} ${f.dest_port || ''}`],
    ['Reporter', f.reporter],
    ['Service', f.dest_service_name ? `${f.dest_service_namespace}/${f.dest_service_name}:${f.dest_service_port_name || f.dest_service_port}` : '—'],
    ['Packets in / out', `${fmtCount(f.packets_in)} / ${fmtCount(f.packets_out)}`],
    ['Bytes in / out', `${fmtBytes(f.bytes_in)} / ${fmtBytes(f.bytes_out)}`],
    ['Connections started / done / live', `${f.num_connections_started} / ${f.num_connections_completed} / ${f.num_connections_live}`],
    ['Record', f.partial
      ? 'partial: open before felix started (counters since the connection began, policies derived)'
      : 'complete'],
  ];
  return (
    <aside className="details" data-testid="details">
      <div className="dp-head">
        <span className={'verdict v-' + f.action}>{f.action}</span>
        <span className="dp-title">{f.source_namespace || '—'}/{f.source_name} → {f.dest_namespace || '—'}/{f.dest_name}</span>
        <button className="btn-icon" onClick={props.onClose} title="Close" aria-label="Close details">×</button>
      </div>
      <div className="dp-grid">
        <section className="dp-section">
          <h3>Source <span className="muted">{f.source_type}</span></h3>
          <div><span className="k">IPs</span> {f.source_ips.join(', ') || '—'}</div>
          <div className="labels"><span className="k">Labels</span> <Labels labels={f.source_labels} /></div>
        </section>
        <section className="dp-section">
          <h3>Destination <span className="muted">{f.dest_type}</span></h3>
          <div><span className="k">IPs</span> {f.dest_ips.join(', ') || '—'}</div>
          <div className="labels"><span className="k">Labels</span> <Labels labels={f.dest_labels} /></div>
        </section>
      </div>
      <section className="dp-section">
        <table className="kv"><tbody>{kv.map(([k, v]) => <tr key={k}><th>{k}</th><td>{v}</td></tr>)}</tbody></table>
      </section>
      <PolicyTable title="Enforced policies" policies={f.policies.enforced} testId="enforced" />
      <PolicyTable title="Pending policies" policies={f.policies.pending} testId="pending" />
    </aside>
  );
}
