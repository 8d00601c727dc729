import { useEffect, useId, useRef, useState } from 'react';
import type { Api } from '../api/client';
import {
  apiParams, decodeMatch, encodeMatch, ENUM_VALUES, type EnumKey, type FilterState, type PolicyMatch, type StringKey,
} from './filters';

const STRING_FIELDS: { key: StringKey; label: string; hint?: string }[] = [
  { key: 'source_namespaces', label: 'Source namespace', hint: 'SourceNamespace' },
  { key: 'source_names', label: 'Source name', hint: 'SourceName' },
  { key: 'dest_namespaces', label: 'Dest namespace', hint: 'DestNamespace' },
  { key: 'dest_names', label: 'Dest name', hint: 'DestName' },
];
const ENUM_FIELDS: { key: EnumKey; label: string }[] = [
  { key: 'actions', label: 'Action' },
  { key: 'pending_actions', label: 'Pending' },
  { key: 'reporters', label: 'Reporter' },
];
const TIME_PRESETS: [number, string][] = [
  [0, 'All retained'], [-300, 'Last 5 min'], [-900, 'Last 15 min'], [-3600, 'Last hour'], [-21600, 'Last 6 h'], [-86400, 'Last 24 h'],
];
const POLICY_KINDS = ['', 'CalicoNetworkPolicy', 'GlobalNetworkPolicy', 'StagedNetworkPolicy', 'StagedGlobalNetworkPolicy',
  'StagedKubernetesNetworkPolicy', 'NetworkPolicy', 'ClusterNetworkPolicyAdminTier', 'ClusterNetworkPolicyBaselineTier', 'Profile', 'EndOfTier'];

type OnError = (e: unknown) => void;

/** Hints for one field from flows-filter-hints, refreshed (debounced) while the user types. */
function useHints(api: Api, type: string | undefined, text: string, filters: FilterState, active: boolean, narrow: (f: FilterState, text: string) => FilterState, onError: OnError) {
  const [items, setItems] = useState<string[]>([]);
  useEffect(() => {
    if (!type || !active) return;
    const ctl = new AbortController();
    const t = setTimeout(() => {
      api.hints(type, apiParams(narrow(filters, text)), ctl.signal)
        .then((p) => setItems(p.items.map((i) => i.value)))
        .catch((e) => { if (!ctl.signal.aborted) onError(e); });
    }, 150);
    return () => { clearTimeout(t); ctl.abort(); };
  }, [api, type, text, filters, active, narrow, onError]);
  return items;
}

function HintInput(props: {
  api: Api; label: string; hintType?: string; filters: FilterState; placeholder?: string; value: string;
  onChange: (v: string) => void; onEnter?: () => void; narrow: (f: FilterState, text: string) => FilterState; onError: OnError; testId: string;
}) {
  const id = useId();
  const [focused, setFocused] = useState(false);
  const hints = useHints(props.api, props.hintType, props.value, props.filters, focused, props.narrow, props.onError);
  return (
    <label className="field">
      <span>{props.label}</span>
      <input
        data-testid={props.testId}
        list={id}
        value={props.value}
        placeholder={props.placeholder}
        onFocus={() => setFocused(true)}
        onBlur={() => setFocused(false)}
        onChange={(e) => props.onChange(e.target.value)}
        onKeyDown={(e) => { if (e.key === 'Enter' && props.onEnter) { e.preventDefault(); props.onEnter(); } }}
      />
      <datalist id={id}>{hints.map((h) => <option key={h} value={h} />)}</datalist>
    </label>
  );
}

// Narrowing for a string field: the typed text (fuzzy) replaces that key's own values.
const narrowKey = (key: StringKey) => (f: FilterState, text: string): FilterState =>
  ({ ...f, [key]: text.trim() === '' ? [] : [{ type: 'Fuzzy', value: text.trim().replace(/^~/, '') }] });
const NARROWERS = Object.fromEntries(STRING_FIELDS.map((s) => [s.key, narrowKey(s.key)])) as Record<StringKey, (f: FilterState, t: string) => FilterState>;
const noPolicyNarrow = (f: FilterState) => ({ ...f, policies: [] });

function StringField(props: { api: Api; field: (typeof STRING_FIELDS)[number]; filters: FilterState; onChange: (f: FilterState) => void; onError: OnError }) {
  const { field, filters } = props;
  const [text, setText] = useState('');
  const add = () => {
    const v = text.trim();
    if (v === '' || v === '~') return;
    const m = decodeMatch(v);
    if (!filters[field.key].some((x) => encodeMatch(x) === encodeMatch(m))) {
      props.onChange({ ...filters, [field.key]: [...filters[field.key], m] });
    }
    setText('');
  };
  return (
    <HintInput api={props.api} label={field.label} hintType={field.hint} filters={filters} value={text} onChange={setText}
      onEnter={add} placeholder="Enter adds; ~x = contains" narrow={NARROWERS[field.key]} onError={props.onError} testId={'f-' + field.key} />
  );
}

export function FilterBar(props: { api: Api; filters: FilterState; onChange: (f: FilterState) => void; onError: OnError }) {
  const { api, filters, onChange, onError } = props;
  const [port, setPort] = useState('');
  const [proto, setProto] = useState('');
  const [portError, setPortError] = useState('');
  const [pol, setPol] = useState<PolicyMatch>({ kind: '', tier: '', namespace: '', name: '', action: '' });
  const from = useRef<HTMLInputElement>(null);

  const toggle = (key: EnumKey, v: string) => {
    const has = filters[key].includes(v);
    onChange({ ...filters, [key]: has ? filters[key].filter((x) => x !== v) : [...filters[key], v] });
  };
  const addPort = () => {
    const v = port.trim();
    if (v === '') return;
    if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 65535) { setPortError('port: a number 1–65535'); return; }
    setPortError('');
    if (!filters.dest_ports.includes(Number(v))) onChange({ ...filters, dest_ports: [...filters.dest_ports, Number(v)] });
    setPort('');
  };
  const addProto = (v: string) => {
    const p = v.trim().toLowerCase();
    if (p !== '' && !filters.protocols.some((m) => m.value === p)) onChange({ ...filters, protocols: [...filters.protocols, { type: 'Exact', value: p }] });
    setProto('');
  };
  const addPolicy = () => {
    if (Object.values(pol).every((v) => v === '')) return;
    onChange({ ...filters, policies: [...filters.policies, pol] });
    setPol({ kind: '', tier: '', namespace: '', name: '', action: '' });
  };
  const setTime = (gte: number, lt: number) => onChange({ ...filters, startTimeGte: gte, startTimeLt: lt });
  const preset = TIME_PRESETS.some(([s]) => s === filters.startTimeGte) && filters.startTimeLt === 0;

  return (
    <div className="filter-bar">
      <div className="fb-row">
        {STRING_FIELDS.map((f) => <StringField key={f.key} api={api} field={f} filters={filters} onChange={onChange} onError={onError} />)}
        <label className="field narrow">
          <span>Protocol</span>
          <select data-testid="f-protocols" value={proto} onChange={(e) => addProto(e.target.value)}>
            <option value="">add…</option>
            {['tcp', 'udp', 'icmp', 'icmpv6', 'sctp'].map((p) => <option key={p} value={p}>{p}</option>)}
          </select>
        </label>
        <label className="field narrow">
          <span>Port</span>
          <input data-testid="f-dest_ports" value={port} inputMode="numeric" placeholder="8080"
            onChange={(e) => setPort(e.target.value)} onKeyDown={(e) => { if (e.key === 'Enter') addPort(); }} onBlur={addPort} />
        </label>
        {ENUM_FIELDS.map((ef) => (
          <div key={ef.key} className="field">
            <span>{ef.label}</span>
            <div className="toggles">
              {ENUM_VALUES[ef.key].map((v) => (
                <button key={v} type="button" data-testid={`f-${ef.key}-${v}`}
                  className={'toggle' + (filters[ef.key].includes(v) ? ' on t-' + v : '')}
                  aria-pressed={filters[ef.key].includes(v)} onClick={() => toggle(ef.key, v)}>{v}</button>
              ))}
            </div>
          </div>
        ))}
      </div>
      <div className="fb-row">
        <label className="field">
          <span>Time</span>
          <select data-testid="f-time" value={preset ? String(filters.startTimeGte) : 'custom'}
            onChange={(e) => { if (e.target.value !== 'custom') setTime(Number(e.target.value), 0); else from.current?.focus(); }}>
            {TIME_PRESETS.map(([s, l]) => <option key={s} value={s}>{l}</option>)}
            <option value="custom">Custom…</option>
          </select>
        </label>
        <label className="field">
          <span>From (UTC)</span>
          <input ref={from} type="datetime-local" step="1" value={absValue(filters.startTimeGte)}
            onChange={(e) => setTime(absSeconds(e.target.value), filters.startTimeLt)} />
        </label>
        <label className="field">
          <span>To (UTC)</span>
          <input type="datetime-local" step="1" value={absValue(filters.startTimeLt)}
            onChange={(e) => setTime(filters.startTimeGte, absSeconds(e.target.value))} />
        </label>
        <span className="fb-sep" />
        <label className="field">
          <span>Policy kind</span>
          <select value={pol.kind} onChange={(e) => setPol({ ...pol, kind: e.target.value })}>
            {POLICY_KINDS.map((k) => <option key={k} value={k}>{k || 'any'}</option>)}
          </select>
        </label>
        <HintInput api={api} label="Policy tier" hintType="PolicyTier" filters={filters} value={pol.tier} onChange={(v) => setPol({ ...pol, tier: v })}
          onEnter={addPolicy} narrow={noPolicyNarrow} onError={onError} testId="f-policy-tier" />
        <HintInput api={api} label="Policy namespace" hintType="PolicyNamespace" filters={filters} value={pol.namespace} onChange={(v) => setPol({ ...pol, namespace: v })}
          onEnter={addPolicy} narrow={noPolicyNarrow} onError={onError} testId="f-policy-namespace" />
        <HintInput api={api} label="Policy name" hintType="PolicyName" filters={filters} value={pol.name} onChange={(v) => setPol({ ...pol, name: v })}
          onEnter={addPolicy} narrow={noPolicyNarrow} onError={onError} testId="f-policy-name" />
        <label className="field narrow">
          <span>Policy action</span>
          <select value={pol.action} onChange={(e) => setPol({ ...pol, action: e.target.value })}>
            {['', 'Allow', 'Deny', 'Pass'].map((a) => <option key={a} value={a}>{a || 'any'}</option>)}
          </select>
        </label>
        <button type="button" className="btn" onClick={addPolicy} data-testid="f-policy-add">Add policy filter</button>
        {portError && <span className="field-error">{portError}</span>}
      </div>
      <Chips filters={filters} onChange={onChange} />
    </div>
  );
}

function absValue(s: number): string {
  return s > 0 ? new Date(s * 1000).toISOString().slice(0, 19) : '';
}
function absSeconds(v: string): number {
  if (v === '') return 0;
  const t = Date.parse(v + 'Z');
  return Number.isNaN(t) ? 0 : Math.floor(t / 1000);
}

function Chips(props: { filters: FilterState; onChange: (f: FilterState) => void }) {
  const { filters: f, onChange } = props;
  const chips: { label: string; remove: () => void }[] = [];
  const labels: Record<string, string> = {
    source_names: 'src', source_namespaces: 'src ns', dest_names: 'dst', dest_namespaces: 'dst ns', protocols: 'proto',
    actions: 'action', pending_actions: 'pending', reporters: 'reporter',
  };
  for (const k of ['source_namespaces', 'source_names', 'dest_namespaces', 'dest_names', 'protocols'] as StringKey[]) {
    f[k].forEach((m, i) => chips.push({
      label: `${labels[k]} ${m.type === 'Fuzzy' ? '∋' : '='} ${m.value}`,
      remove: () => onChange({ ...f, [k]: f[k].filter((_, j) => j !== i) }),
    }));
  }
  f.dest_ports.forEach((p) => chips.push({ label: `port = ${p}`, remove: () => onChange({ ...f, dest_ports: f.dest_ports.filter((x) => x !== p) }) }));
  for (const k of ['actions', 'pending_actions', 'reporters'] as EnumKey[]) {
    f[k].forEach((v) => chips.push({ label: `${labels[k]} = ${v}`, remove: () => onChange({ ...f, [k]: f[k].filter((x) => x !== v) }) }));
  }
  f.policies.forEach((p, i) => chips.push({
    label: 'policy ' + [p.kind, p.tier, p.namespace, p.name, p.action].map((x) => x || '*').join(' / '),
    remove: () => onChange({ ...f, policies: f.policies.filter((_, j) => j !== i) }),
  }));
  if (f.startTimeGte !== 0 || f.startTimeLt !== 0) {
    chips.push({ label: `time ${f.startTimeGte} … ${f.startTimeLt || 'now'}`, remove: () => onChange({ ...f, startTimeGte: 0, startTimeLt: 0 }) });
  }
  if (chips.length === 0) return null;
  return (
    <div className="chips" data-testid="chips">
      {chips.map((c) => (
        <span key={c.label} className="chip">{c.label}<button type="button" onClick={c.remove} aria-label={'remove ' + c.label}>×</button></span>
      ))}
      <button type="button" className="btn-link" onClick={() => onChange({ ...f, source_names: [], source_namespaces: [], dest_names: [], dest_namespaces: [], protocols: [], dest_ports: [], actions: [], pending_actions: [], reporters: [], policies: [], startTimeGte: 0, startTimeLt: 0 })}>clear all</button>
    </div>
  );
}
