import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { Api, ApiError, loadAllFlows } from './api/client';
import type { FlowResponse } from './api/types';
import { saveCredential, type Credential } from './auth/auth';
import { LoginDialog } from './auth/LoginDialog';
import { DetailsPanel } from './details/DetailsPanel';
import { FilterBar } from './filters/FilterBar';
import { activeCount, apiParams, filterKey, listParams, type FilterState, type View } from './filters/filters';
import { useUrlFilters } from './filters/useUrlFilters';
import { fmtCount } from './format';
import { GraphView } from './graph/GraphView';
import { PolicyView } from './stats/PolicyView';
import { FlowTable, type Row } from './table/FlowTable';
import { Listing } from './table/listing';

const FIRST_PAGE_SIZE = 100; // paints fast
const PAGE_SIZE = 1000; // goldmane's default MAX_PAGE_SIZE; halved if the server allows less
const MAX_ROWS = 100_000; // bounds memory; the oldest rows go first
const GRAPH_MAX_WORKLOADS = 400;
const GRAPH_MAX_EDGES = 3000;

/** Counters the browser tests and the benchmark read (no secrets). */
export interface WhiskerProbe {
  loadedRows: number;
  total: number;
  loadDone: boolean;
  liveReceived: number;
  liveRendered: number;
  liveBuffered: number;
}
declare global {
  interface Window { whisker: WhiskerProbe }
}
const probe: WhiskerProbe = { loadedRows: 0, total: 0, loadDone: false, liveReceived: 0, liveRendered: 0, liveBuffered: 0 };
window.whisker = probe;

let nextKey = 1;
const toRows = (flows: FlowResponse[]): Row[] => flows.map((flow) => ({ key: nextKey++, flow }));

export function App(props: { initialCredential: Credential | null }) {
  const credential = useRef<Credential | null>(props.initialCredential);
  const api = useMemo(() => new Api(() => credential.current), []);
  const [filters, setFilters] = useUrlFilters();
  const [authPrompt, setAuthPrompt] = useState<string | null>(null);
  const [authVersion, setAuthVersion] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [rows, setRows] = useState<Row[]>([]);
  const [total, setTotal] = useState(0);
  const [loading, setLoading] = useState(false);
  const [selected, setSelected] = useState<number | null>(null);
  const [live, setLive] = useState(false);
  const [paused, setPaused] = useState(false);
  const [buffered, setBuffered] = useState(0);

  const onError = useCallback((e: unknown) => {
    if (e instanceof DOMException && e.name === 'AbortError') return;
    if (e instanceof ApiError && e.status === 401) {
      setAuthPrompt(credential.current ? 'The credential was refused: ' + e.message : 'This Whisker needs a credential: ' + e.message);
      return;
    }
    setError(e instanceof Error ? e.message : String(e));
  }, []);

  const key = filterKey(filters);
  const params = useMemo(() => apiParams(filters), [key]); // eslint-disable-line react-hooks/exhaustive-deps
  const flowParams = useMemo(() => listParams(filters), [key]); // eslint-disable-line react-hooks/exhaustive-deps
  const needsFlows = filters.view !== 'policies';

  // Page through GET flows whenever the filters (not the view) change.
  const listing = useRef(new Listing());
  useEffect(() => {
    if (!needsFlows) return;
    const ctl = new AbortController();
    setRows([]);
    setTotal(0);
    setSelected(null);
    setError(null);
    setLoading(true);
    Object.assign(probe, { loadedRows: 0, total: 0, loadDone: false });
    performance.clearMarks('whisker:load-start');
    performance.mark('whisker:load-start');
    const listed = new Listing();
    listing.current = listed;
    let first = true;
    loadAllFlows((page, size) => api.flows(flowParams, page, size, ctl.signal), FIRST_PAGE_SIZE, PAGE_SIZE, MAX_ROWS, (items, t, done) => {
      const fresh = items.filter((f) => listed.add(f));
      setRows((old) => old.concat(toRows(fresh)));
      setTotal(t);
      probe.loadedRows += fresh.length;
      probe.total = t;
      if (first) { first = false; requestAnimationFrame(() => performance.mark('whisker:first-page')); }
      if (done) {
        probe.loadDone = true;
        setLoading(false);
        requestAnimationFrame(() => performance.mark('whisker:all-loaded'));
      }
    }).catch((e) => { if (!ctl.signal.aborted) { setLoading(false); onError(e); } });
    return () => ctl.abort();
  }, [api, key, authVersion, needsFlows]); // eslint-disable-line react-hooks/exhaustive-deps

  // Live mode: new flows are buffered and flushed once per animation frame (prepended); while
  // paused they stay in the buffer, so nothing already shown or received is lost.
  const incoming = useRef<FlowResponse[]>([]);
  const pausedRef = useRef(paused);
  pausedRef.current = paused;
  const frame = useRef(0);
  const flush = useCallback(() => {
    frame.current = 0;
    if (pausedRef.current || incoming.current.length === 0) return;
    const batch = incoming.current.reverse();
    incoming.current = [];
    const t0 = performance.now();
    setRows((old) => {
      const next = toRows(batch).concat(old);
      return next.length > MAX_ROWS ? next.slice(0, MAX_ROWS) : next;
    });
    setTotal((t) => t + batch.length);
    probe.liveRendered += batch.length;
    probe.liveBuffered = 0;
    setBuffered(0);
    requestAnimationFrame(() => performance.measure('whisker:live-flush', { start: t0, end: performance.now() }));
  }, []);
  useEffect(() => {
    if (!live) return;
    const ctl = new AbortController();
    const liveParams = new URLSearchParams(params);
    liveParams.delete('startTimeGte');
    liveParams.delete('startTimeLt');
    api.watch(liveParams, (f) => {
      if (listing.current.covers(f)) return; // the listing already counts this bucket
      incoming.current.push(f);
      probe.liveReceived++;
      probe.liveBuffered = incoming.current.length;
      if (pausedRef.current) setBuffered(incoming.current.length);
      else if (!frame.current) frame.current = requestAnimationFrame(flush);
    }, ctl.signal).then(() => { if (!ctl.signal.aborted) setLive(false); })
      .catch((e) => { if (!ctl.signal.aborted) { setLive(false); onError(e); } });
    return () => { ctl.abort(); cancelAnimationFrame(frame.current); frame.current = 0; };
  }, [api, live, key, authVersion]); // eslint-disable-line react-hooks/exhaustive-deps
  useEffect(() => { if (!paused && live) flush(); }, [paused, live, flush]);

  const setView = (view: View) => setFilters({ ...filters, view });
  const change = (f: FilterState) => setFilters(f);
  const signIn = (c: Credential) => {
    credential.current = c;
    saveCredential(window.sessionStorage, c);
    setAuthPrompt(null);
    setAuthVersion((v) => v + 1);
  };
  const signOut = () => {
    credential.current = null;
    saveCredential(window.sessionStorage, null);
    setLive(false);
    setAuthPrompt('Signed out.');
  };
  const flows = useMemo(() => rows.map((r) => r.flow), [rows]);
  const selectedFlow = selected === null ? null : rows.find((r) => r.key === selected)?.flow ?? null;
  const n = activeCount(filters);

  return (
    <div className="app">
      <header className="top">
        <div className="brand"><span className="logo" aria-hidden>◠</span> whisker <span className="muted">flow logs</span></div>
        <nav className="tabs">
          {([['table', 'Flows'], ['graph', 'Graph'], ['policies', 'Policies']] as [View, string][]).map(([v, l]) => (
            <button key={v} className={filters.view === v ? 'active' : ''} onClick={() => setView(v)} data-testid={'tab-' + v}>{l}</button>
          ))}
        </nav>
        <div className="live">
          {!live ? (
            <button className="btn live-btn" onClick={() => { setPaused(false); setLive(true); }} data-testid="live-play" title="Stream new flows">▶ Live</button>
          ) : (
            <>
              <span className={'live-dot' + (paused ? ' paused' : '')} />
              <button className="btn live-btn" onClick={() => setPaused(!paused)} data-testid="live-pause">{paused ? '▶ Resume' : '❚❚ Pause'}</button>
              <button className="btn" onClick={() => setLive(false)} data-testid="live-stop" title="Stop streaming">■</button>
              {paused && buffered > 0 && <span className="buffered" data-testid="live-buffered">+{fmtCount(buffered)} buffered</span>}
            </>
          )}
        </div>
        <div className="count" data-testid="count">
          {needsFlows && <>{fmtCount(rows.length)} of {fmtCount(total)} flows{loading ? ' · loading…' : ''}</>}
          {n > 0 && <span className="badge">{n} filter{n > 1 ? 's' : ''}</span>}
        </div>
        <button className="btn-link light" onClick={signOut}>Sign out</button>
      </header>
      <FilterBar api={api} filters={filters} onChange={change} onError={onError} />
      {error && (
        <div className="error" role="alert" data-testid="error">
          <b>Error:</b> {error}
          <button className="btn-icon" onClick={() => setError(null)} aria-label="Dismiss">×</button>
        </div>
      )}
      <main className="content">
        {filters.view === 'table' && (
          <div className="table-split">
            <FlowTable rows={rows} selected={selected} onSelect={setSelected} sortBy={filters.sortBy} onSort={(sortBy) => setFilters({ ...filters, sortBy })} />
            {selectedFlow && <DetailsPanel flow={selectedFlow} onClose={() => setSelected(null)} />}
          </div>
        )}
        {filters.view === 'graph' && (
          <GraphView flows={flows} maxWorkloads={GRAPH_MAX_WORKLOADS} maxEdges={GRAPH_MAX_EDGES}
            onNamespace={(ns) => setFilters({ ...filters, view: 'table', source_namespaces: [{ type: 'Exact', value: ns }] })} />
        )}
        {filters.view === 'policies' && (
          <PolicyView api={api} params={params} onError={onError}
            onSelect={(p) => setFilters({ ...filters, view: 'table', policies: [{ ...p.policy, action: '' }] })} />
        )}
      </main>
      {authPrompt !== null && <LoginDialog message={authPrompt} onSubmit={signIn} />}
    </div>
  );
}
