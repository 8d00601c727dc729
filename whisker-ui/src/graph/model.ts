// Traffic graph: workloads (grouped by namespace) as nodes, flows aggregated into edges per
// (source, destination, verdict). Over a threshold the graph folds to namespaces. The layout
// is deterministic: namespaces on a circle in name order, their workloads on a sunflower
// spiral around the namespace centre, so the same flows always draw the same picture.

import type { FlowResponse } from '../api/types';

export const VERDICT_COLOURS: Record<string, string> = {
  Allow: '#2f9e55',
  Deny: '#d9453b',
  Pass: '#8b929c',
};
export function verdictColour(action: string): string {
  return VERDICT_COLOURS[action] ?? VERDICT_COLOURS.Pass;
}

/** Flows with no namespace (networks, host endpoints, global sets) share this group. */
export const GLOBAL_NS = '(global)';

export interface GraphNode {
  id: string;
  namespace: string;
  name: string;
  /** 'workload' or a folded 'namespace' node */
  kind: 'workload' | 'namespace';
  x: number;
  y: number;
  r: number;
  flows: number;
}
export interface GraphEdge {
  id: string;
  source: string;
  target: string;
  action: string;
  colour: string;
  flows: number;
  bytes: number;
  /** the curve: from (x1, y1) to the target's rim (x2, y2), bending at (cx, cy) */
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  cx: number;
  cy: number;
}
export interface NamespaceGroup {
  name: string;
  x: number;
  y: number;
  r: number;
  workloads: number;
}
export interface GraphModel {
  nodes: GraphNode[];
  edges: GraphEdge[];
  groups: NamespaceGroup[];
  /** true when workloads were folded into their namespaces */
  aggregated: boolean;
  /** true when edges join namespace circles (too many workload edges), nodes kept */
  edgesByNamespace: boolean;
  width: number;
  height: number;
}

export interface GraphOptions {
  /** fold to namespaces when there are more workload nodes than this */
  maxWorkloads: number;
  /** above this many workload-level edges, edges are aggregated per namespace pair (nodes stay) */
  maxEdges?: number;
}

const nsOf = (ns: string) => (ns === '' ? GLOBAL_NS : ns);
const nodeId = (ns: string, name: string) => nsOf(ns) + '/' + name;

export function buildGraph(flows: readonly FlowResponse[], opts: GraphOptions = { maxWorkloads: 400, maxEdges: 3000 }): GraphModel {
  const workloads = new Map<string, { ns: string; name: string; flows: number }>();
  const touch = (ns: string, name: string) => {
    const id = nodeId(ns, name);
    let w = workloads.get(id);
    if (!w) workloads.set(id, (w = { ns: nsOf(ns), name, flows: 0 }));
    w.flows++;
    return id;
  };
  const raw: { s: string; t: string; sNs: string; tNs: string; action: string; bytes: number }[] = [];
  for (const f of flows) {
    const s = touch(f.source_namespace, f.source_name);
    const t = touch(f.dest_namespace, f.dest_name);
    raw.push({ s, t, sNs: nsOf(f.source_namespace), tNs: nsOf(f.dest_namespace), action: f.action, bytes: f.bytes_in + f.bytes_out });
  }
  const aggregated = workloads.size > opts.maxWorkloads;
  let edgesByNamespace = aggregated;
  if (!aggregated && opts.maxEdges !== undefined) {
    const distinct = new Set<string>();
    for (const e of raw) {
      distinct.add(e.s + '>' + e.t + '#' + e.action);
      if (distinct.size > opts.maxEdges) { edgesByNamespace = true; break; }
    }
  }

  // Namespace membership, sorted for a deterministic layout.
  const byNs = new Map<string, { id: string; name: string; flows: number }[]>();
  for (const [id, w] of workloads) {
    let list = byNs.get(w.ns);
    if (!list) byNs.set(w.ns, (list = []));
    list.push({ id, name: w.name, flows: w.flows });
  }
  const nsNames = [...byNs.keys()].sort();
  for (const list of byNs.values()) list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  const spacing = 26; // px between workload centres inside a cluster
  const clusterR = (n: number) => (aggregated ? 40 : spacing * Math.sqrt(Math.max(1, n)) * 0.75 + 30);
  const radii = nsNames.map((ns) => clusterR(byNs.get(ns)!.length));
  // Ring radius: the clusters' diameters laid along the circumference, plus gaps.
  const GAP = 40;
  const circumference = radii.reduce((a, r) => a + 2 * r + GAP, 0);
  // Chords are shorter than arcs: grow the ring until every pair of neighbours is apart.
  const angles: number[] = [];
  let acc = 0;
  for (const r of radii) {
    angles.push(((acc + r + GAP / 2) / circumference) * 2 * Math.PI);
    acc += 2 * r + GAP;
  }
  let ring = nsNames.length <= 1 ? 0 : circumference / (2 * Math.PI);
  for (let i = 0; i < nsNames.length && nsNames.length > 1; i++) {
    for (let j = i + 1; j < nsNames.length; j++) {
      const theta = Math.abs(angles[j] - angles[i]);
      const chord = 2 * Math.sin(Math.min(theta, 2 * Math.PI - theta) / 2);
      ring = Math.max(ring, (radii[i] + radii[j] + GAP) / Math.max(chord, 1e-6));
    }
  }
  const maxR = Math.max(0, ...radii);
  const half = ring + maxR + 40;

  const groups: NamespaceGroup[] = [];
  const nodes: GraphNode[] = [];
  nsNames.forEach((ns, i) => {
    const r = radii[i];
    // Angle at the centre of this cluster's share of the circumference; the first on top.
    const angle = nsNames.length <= 1 ? 0 : angles[i] - angles[0] - Math.PI / 2;
    const cx = half + ring * Math.cos(angle);
    const cy = half + ring * Math.sin(angle);
    const members = byNs.get(ns)!;
    groups.push({ name: ns, x: cx, y: cy, r, workloads: members.length });
    if (aggregated) {
      nodes.push({ id: 'ns:' + ns, namespace: ns, name: ns, kind: 'namespace', x: cx, y: cy, r: 14, flows: members.reduce((a, m) => a + m.flows, 0) });
      return;
    }
    members.forEach((m, k) => {
      // Sunflower (Vogel) spiral: even density, no overlap, depends only on the index.
      const d = k === 0 && members.length === 1 ? 0 : spacing * 0.75 * Math.sqrt(k + 0.5);
      const a = k * 2.399963229728653;
      nodes.push({ id: m.id, namespace: ns, name: m.name, kind: 'workload', x: cx + d * Math.cos(a), y: cy + d * Math.sin(a), r: 6, flows: m.flows });
    });
  });

  const edges = new Map<string, GraphEdge>();
  for (const e of raw) {
    const s = edgesByNamespace ? 'ns:' + e.sNs : e.s;
    const t = edgesByNamespace ? 'ns:' + e.tNs : e.t;
    const id = s + '>' + t + '#' + e.action;
    let edge = edges.get(id);
    if (!edge) edges.set(id, (edge = { id, source: s, target: t, action: e.action, colour: verdictColour(e.action), flows: 0, bytes: 0, x1: 0, y1: 0, x2: 0, y2: 0, cx: 0, cy: 0 }));
    edge.flows++;
    edge.bytes += e.bytes;
  }
  const edgeList = [...edges.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
  const groupOf = new Map(groups.map((x) => [x.name, x]));
  // Edge ends: workload (or folded namespace) nodes, or namespace circles when edges are aggregated.
  const ends = new Map<string, { x: number; y: number; r: number; ns: string }>();
  for (const n of nodes) ends.set(n.id, { x: n.x, y: n.y, r: n.r, ns: n.namespace });
  if (edgesByNamespace) for (const x of groups) ends.set('ns:' + x.name, { x: x.x, y: x.y, r: x.r, ns: x.name });
  for (const e of edgeList) {
    const a = ends.get(e.source)!, b = ends.get(e.target)!;
    const c = controlPoint(a, b, groupOf.get(a.ns)!, groupOf.get(b.ns)!, e.action);
    if (a === b) {
      // Traffic inside one namespace circle (or workload): a loop on top of it.
      const top = { x: a.x, y: a.y - a.r };
      Object.assign(e, { x1: top.x, y1: top.y, x2: top.x, y2: top.y, cx: top.x, cy: top.y });
      continue;
    }
    const from = edgesByNamespace && !aggregated ? towards(a, c, a.r) : a;
    const to = towards(b, c, b.r + 1.5);
    Object.assign(e, { x1: from.x, y1: from.y, x2: to.x, y2: to.y, cx: c.x, cy: c.y });
  }
  return { nodes, edges: edgeList, groups, aggregated, edgesByNamespace, width: 2 * half, height: 2 * half };
}

type P = { x: number; y: number };

/** The point at distance d from p in the direction of q (p itself when they coincide). */
function towards(p: P, q: P, d: number): P {
  const dx = q.x - p.x, dy = q.y - p.y, l = Math.hypot(dx, dy);
  return l === 0 ? { x: p.x, y: p.y } : { x: p.x + (dx / l) * d, y: p.y + (dy / l) * d };
}
const VERDICT_SHIFT: Record<string, number> = { Allow: 0, Deny: 1, Pass: -1 };

/**
 * Where an edge's curve bends. Between two namespaces every edge bends through the same point
 * near the middle of the two namespace centres (a cheap edge bundle), shifted sideways by
 * verdict so Allow, Deny and Pass bundles stay apart. Inside one namespace (or between folded
 * namespace nodes) the curve bows off the straight line instead.
 */
export function controlPoint(a: P, b: P, ga: P, gb: P, action: string): P {
  const shift = VERDICT_SHIFT[action] ?? -1;
  const same = ga.x === gb.x && ga.y === gb.y;
  const [p, q] = same || (a.x === ga.x && a.y === ga.y && b.x === gb.x && b.y === gb.y) ? [a, b] : [ga, gb];
  const mx = (p.x + q.x) / 2, my = (p.y + q.y) / 2;
  const dx = q.x - p.x, dy = q.y - p.y;
  const len = Math.hypot(dx, dy) || 1;
  const bow = same || p === a ? 0.15 * len : 0;
  const side = bow + shift * 12;
  return { x: mx - (dy / len) * side, y: my + (dx / len) * side };
}

/** A quadratic curve from a to b through control point c; a self-loop draws a small loop. */
export function edgePath(a: P, b: P, c: P): string {
  if (a.x === b.x && a.y === b.y) {
    return `M${r1(a.x)},${r1(a.y)} c 18,-28 36,0 0,0`;
  }
  return `M${r1(a.x)},${r1(a.y)} Q${r1(c.x)},${r1(c.y)} ${r1(b.x)},${r1(b.y)}`;
}
const r1 = (v: number) => Math.round(v * 10) / 10;
