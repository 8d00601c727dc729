import { useMemo, useRef, useState } from 'react';
import type { FlowResponse } from '../api/types';
import { fmtBytes, fmtCount } from '../format';
import { buildGraph, edgePath, VERDICT_COLOURS, type GraphEdge, type GraphNode } from './model';

interface View { k: number; x: number; y: number }
type Hover = { kind: 'node'; node: GraphNode; x: number; y: number } | { kind: 'edge'; edge: GraphEdge; x: number; y: number } | null;

/** SVG traffic graph with wheel zoom, drag pan and hover details. */
export function GraphView(props: { flows: FlowResponse[]; maxWorkloads: number; maxEdges: number; onNamespace: (ns: string) => void }) {
  const [fold, setFold] = useState<'auto' | 'namespaces'>('auto');
  const g = useMemo(
    () => buildGraph(props.flows, { maxWorkloads: fold === 'namespaces' ? 0 : props.maxWorkloads, maxEdges: props.maxEdges }),
    [props.flows, props.maxWorkloads, props.maxEdges, fold],
  );
  const byId = useMemo(() => new Map(g.nodes.map((n) => [n.id, n])), [g]);
  const edgeById = useMemo(() => new Map(g.edges.map((e) => [e.id, e])), [g]);
  const [view, setView] = useState<View>({ k: 1, x: 0, y: 0 });
  const [hover, setHover] = useState<Hover>(null);
  const svg = useRef<SVGSVGElement>(null);
  const drag = useRef<{ x: number; y: number; vx: number; vy: number } | null>(null);
  const maxFlows = Math.max(1, ...g.edges.map((e) => e.flows));

  const onWheel = (e: React.WheelEvent) => {
    const r = svg.current!.getBoundingClientRect();
    // Zoom around the cursor: keep the graph point under it fixed.
    const px = ((e.clientX - r.left) / r.width) * g.width, py = ((e.clientY - r.top) / r.height) * g.height;
    const k = Math.min(12, Math.max(0.3, view.k * Math.exp(-e.deltaY * 0.0015)));
    setView({ k, x: px - ((px - view.x) * k) / view.k, y: py - ((py - view.y) * k) / view.k });
  };
  const onDown = (e: React.PointerEvent) => {
    drag.current = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y };
    (e.target as Element).setPointerCapture?.(e.pointerId);
  };
  const onMove = (e: React.PointerEvent) => {
    const r = svg.current!.getBoundingClientRect();
    if (drag.current) {
      const s = g.width / r.width;
      setView({ ...view, x: drag.current.vx + (e.clientX - drag.current.x) * s, y: drag.current.vy + (e.clientY - drag.current.y) * s });
      return;
    }
    const t = e.target as Element;
    const pos = { x: e.clientX - r.left + 14, y: e.clientY - r.top + 10 };
    const nid = t.getAttribute('data-node');
    const eid = t.getAttribute('data-edge');
    if (nid && byId.has(nid)) setHover({ kind: 'node', node: byId.get(nid)!, ...pos });
    else if (eid && edgeById.has(eid)) setHover({ kind: 'edge', edge: edgeById.get(eid)!, ...pos });
    else if (hover) setHover(null);
  };
  const onUp = () => { drag.current = null; };
  const labels = g.nodes.length <= 80 || view.k >= 1.8;
  // Namespace names stay readable when a big graph is scaled down to fit.
  const nsFont = Math.max(14, g.width / 70) / Math.sqrt(view.k);

  return (
    <div className="graph-wrap">
      <div className="graph-tools">
        <span>{fmtCount(g.nodes.length)} nodes · {fmtCount(g.edges.length)} edges · {fmtCount(props.flows.length)} flows{g.aggregated ? ' · folded to namespaces' : g.edgesByNamespace ? ' · edges aggregated by namespace' : ''}</span>
        <label><input type="checkbox" checked={fold === 'namespaces'} onChange={(e) => setFold(e.target.checked ? 'namespaces' : 'auto')} /> namespaces only</label>
        <button className="btn" onClick={() => setView({ k: 1, x: 0, y: 0 })}>Reset view</button>
        <span className="legend">
          {Object.entries(VERDICT_COLOURS).map(([a, c]) => <span key={a}><i style={{ background: c }} />{a}</span>)}
        </span>
      </div>
      <svg ref={svg} className="graph" data-testid="graph" viewBox={`0 0 ${g.width || 100} ${g.height || 100}`}
        preserveAspectRatio="xMidYMid meet" onWheel={onWheel} onPointerDown={onDown} onPointerMove={onMove} onPointerUp={onUp}
        onPointerLeave={() => { onUp(); setHover(null); }}>
        <defs>
          {Object.entries(VERDICT_COLOURS).map(([a, c]) => (
            <marker key={a} id={'arrow-' + a} viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" markerUnits="userSpaceOnUse" orient="auto">
              <path d="M0,0 L10,5 L0,10 z" fill={c} />
            </marker>
          ))}
        </defs>
        <g transform={`translate(${view.x},${view.y}) scale(${view.k})`}>
          {g.groups.map((ns) => (
            <g key={ns.name} className="ns-group" onDoubleClick={() => props.onNamespace(ns.name)}>
              <circle cx={ns.x} cy={ns.y} r={ns.r} />
            </g>
          ))}
          {g.edges.map((e) => (
            <path key={e.id} data-edge={e.id} className={'edge e-' + e.action}
              d={edgePath({ x: e.x1, y: e.y1 }, { x: e.x2, y: e.y2 }, { x: e.cx, y: e.cy })} stroke={e.colour}
              strokeWidth={(g.edgesByNamespace ? 1.5 : 0.8) + (g.edgesByNamespace ? 8 : 2.5) * Math.sqrt(e.flows / maxFlows)}
              markerEnd={`url(#arrow-${e.action in VERDICT_COLOURS ? e.action : 'Pass'})`} fill="none" />
          ))}
          {g.nodes.map((n) => (
            <g key={n.id}>
              <circle data-node={n.id} className={'node n-' + n.kind} cx={n.x} cy={n.y} r={n.r} />
              {labels && <text className="node-label" x={n.x} y={n.y + n.r + 9} textAnchor="middle">{n.name}</text>}
            </g>
          ))}
          {g.groups.map((ns) => (
            <text key={ns.name} className="ns-label" x={ns.x} y={ns.y - ns.r - 10 - nsFont / 2} textAnchor="middle"
              style={{ fontSize: nsFont }}>{ns.name} ({ns.workloads})</text>
          ))}
        </g>
      </svg>
      {hover && (
        <div className="tooltip" style={{ left: hover.x, top: hover.y }} data-testid="graph-tooltip">
          {hover.kind === 'node' ? (
            <><b>{hover.node.namespace}/{hover.node.name}</b><br />{hover.node.kind} · {fmtCount(hover.node.flows)} flow ends</>
          ) : (
            <><b>{hover.edge.source} → {hover.edge.target}</b><br /><span className={'verdict v-' + hover.edge.action}>{hover.edge.action}</span> {fmtCount(hover.edge.flows)} flows · {fmtBytes(hover.edge.bytes)}</>
          )}
        </div>
      )}
    </div>
  );
}
