import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import type { FlowResponse } from '../api/types';
import { fmtBytes, fmtTime } from '../format';
import { virtualWindow } from './virtual';
import type { Sort } from '../filters/filters';

export const ROW_HEIGHT = 26;
const OVERSCAN = 8;

export interface Row {
  key: number;
  flow: FlowResponse;
}

const COLUMNS: { title: string; cls: string; sort?: Sort }[] = [
  { title: 'Start', cls: 'c-time', sort: 'Time' }, { title: 'End', cls: 'c-time' }, { title: 'Action', cls: 'c-action' },
  { title: 'Source namespace', cls: 'c-ns', sort: 'SourceNamespace' }, { title: 'Source', cls: 'c-name', sort: 'SourceName' },
  { title: 'Dest namespace', cls: 'c-ns', sort: 'DestNamespace' }, { title: 'Destination', cls: 'c-name', sort: 'DestName' },
  { title: 'Proto', cls: 'c-proto' }, { title: 'Port', cls: 'c-port' }, { title: 'Reporter', cls: 'c-rep' },
  { title: 'Bytes in / out', cls: 'c-bytes' },
];

/** A virtualised table: only the rows in (and just around) the viewport are in the DOM. */
export function FlowTable(props: { rows: Row[]; selected: number | null; onSelect: (key: number) => void; sortBy: Sort; onSort: (s: Sort) => void }) {
  const { rows, selected, onSelect } = props;
  const scroller = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    setHeight(el.clientHeight);
    const ro = new ResizeObserver(() => setHeight(el.clientHeight));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    let frame = 0;
    const onScroll = () => {
      if (frame) return;
      frame = requestAnimationFrame(() => { frame = 0; setScrollTop(el.scrollTop); });
    };
    el.addEventListener('scroll', onScroll, { passive: true });
    return () => { el.removeEventListener('scroll', onScroll); cancelAnimationFrame(frame); };
  }, []);

  const w = virtualWindow(scrollTop, height, ROW_HEIGHT, rows.length, OVERSCAN);
  const visible = rows.slice(w.start, w.end);
  return (
    <div className="flow-table" role="table" aria-rowcount={rows.length}>
      <div className="ft-inner">
      <div className="ft-head" role="row">
        {COLUMNS.map((c) => c.sort ? (
          <div key={c.title} className={'ft-cell sortable ' + c.cls + (props.sortBy === c.sort ? ' sorted' : '')} role="columnheader"
            aria-sort={props.sortBy === c.sort ? (c.sort === 'Time' ? 'descending' : 'ascending') : 'none'}
            title={c.sort === 'Time' ? 'Sort newest first' : 'Sort by ' + c.title.toLowerCase()}
            onClick={() => props.onSort(c.sort!)} data-testid={'sort-' + c.sort}>
            {c.title}{props.sortBy === c.sort ? (c.sort === 'Time' ? ' ▼' : ' ▲') : ''}
          </div>
        ) : <div key={c.title} className={'ft-cell ' + c.cls} role="columnheader">{c.title}</div>)}
      </div>
      <div className="ft-body" ref={scroller} data-testid="flow-scroller">
        <div style={{ height: w.total, position: 'relative' }}>
          <div style={{ transform: `translateY(${w.offset}px)` }}>
            {visible.map((r, i) => (
              <FlowRow key={r.key} row={r} odd={(w.start + i) % 2 === 1} selected={r.key === selected} onSelect={onSelect} />
            ))}
          </div>
        </div>
        {rows.length === 0 && <div className="empty">No flows match.</div>}
      </div>
      </div>
    </div>
  );
}

function FlowRow(props: { row: Row; odd: boolean; selected: boolean; onSelect: (key: number) => void }) {
  const f = props.row.flow;
  return (
    <div
      className={'ft-row' + (props.odd ? ' odd' : '') + (props.selected ? ' selected' : '')}
      role="row"
      data-flow-id={f.id}
      onClick={() => props.onSelect(props.row.key)}
    >
      <div className="ft-cell c-time">{fmtTime(f.start_time)}</div>
      <div className="ft-cell c-time">{fmtTime(f.end_time)}</div>
      <div className="ft-cell c-action"><span className={'verdict v-' + f.action}>{f.action}</span></div>
      <div className="ft-cell c-ns" title={f.source_namespace}>{f.source_namespace || '—'}</div>
      <div className="ft-cell c-name" title={f.source_name}>{f.source_name}</div>
      <div className="ft-cell c-ns" title={f.dest_namespace}>{f.dest_namespace || '—'}</div>
      <div className="ft-cell c-name" title={f.dest_name}>{f.dest_name}</div>
      <div className="ft-cell c-proto">{f.protocol}</div>
      <div className="ft-cell c-port">{f.dest_port || ''}</div>
      <div className="ft-cell c-rep">{f.reporter}</div>
      <div className="ft-cell c-bytes">{fmtBytes(f.bytes_in)} / {fmtBytes(f.bytes_out)}</div>
    </div>
  );
}
