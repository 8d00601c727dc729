import { describe, expect, it } from 'vitest';
import { buildGraph, controlPoint, edgePath, GLOBAL_NS, verdictColour } from './model';
import { flow } from '../testdata';

describe('buildGraph', () => {
  const flows = [
    flow({ action: 'Allow', bytes_in: 10, bytes_out: 5 }),
    flow({ action: 'Allow', bytes_in: 1, bytes_out: 1 }),
    flow({ action: 'Deny' }),
    flow({ action: 'Pass', source_name: 'pub', source_namespace: '', source_type: 'Network' }),
  ];

  it('one node per workload, grouped by namespace; flows with no namespace go to the global group', () => {
    const g = buildGraph(flows);
    expect(g.aggregated).toBe(false);
    expect(g.nodes.map((n) => n.id).sort()).toEqual([GLOBAL_NS + '/pub', 'demo-a/client-*', 'demo-b/api-*']);
    expect(g.groups.map((x) => x.name)).toEqual([GLOBAL_NS, 'demo-a', 'demo-b']);
  });

  it('aggregates edges per (source, destination, verdict) and colours by verdict', () => {
    const g = buildGraph(flows);
    const allow = g.edges.find((e) => e.action === 'Allow')!;
    expect(allow).toMatchObject({ source: 'demo-a/client-*', target: 'demo-b/api-*', flows: 2, bytes: 17, colour: '#2f9e55' });
    const deny = g.edges.find((e) => e.action === 'Deny')!;
    expect(deny.colour).toBe('#d9453b');
    expect(deny.flows).toBe(1);
    expect(g.edges).toHaveLength(3);
    expect(verdictColour('Pass')).toBe('#8b929c');
    expect(verdictColour('Unknown')).toBe('#8b929c');
  });

  it('folds workloads into namespace nodes above the threshold', () => {
    const many = Array.from({ length: 30 }, (_, i) => flow({ source_name: 'c' + i, action: i % 2 ? 'Deny' : 'Allow' }));
    const g = buildGraph(many, { maxWorkloads: 10 });
    expect(g.aggregated).toBe(true);
    expect(g.nodes.map((n) => n.id)).toEqual(['ns:demo-a', 'ns:demo-b']);
    expect(g.edges.map((e) => [e.source, e.target, e.action, e.flows])).toEqual([
      ['ns:demo-a', 'ns:demo-b', 'Allow', 15],
      ['ns:demo-a', 'ns:demo-b', 'Deny', 15],
    ]);
  });

  it('too many edges: nodes stay, edges join namespace circles per verdict', () => {
    const many = Array.from({ length: 40 }, (_, i) => flow({ source_name: 's' + (i % 20), dest_name: 'd' + (i % 7), action: i % 4 ? 'Allow' : 'Deny' }));
    expect(buildGraph(many, { maxWorkloads: 1000, maxEdges: 100 }).edgesByNamespace).toBe(false);
    const g = buildGraph(many, { maxWorkloads: 1000, maxEdges: 10 });
    expect(g.aggregated).toBe(false);
    expect(g.edgesByNamespace).toBe(true);
    expect(g.nodes).toHaveLength(27);
    expect(g.edges.map((e) => [e.source, e.target, e.action, e.flows])).toEqual([
      ['ns:demo-a', 'ns:demo-b', 'Allow', 30],
      ['ns:demo-a', 'ns:demo-b', 'Deny', 10],
    ]);
    // the curve starts on the source circle's rim and ends on the target's
    const [ga, gb] = g.groups;
    const e = g.edges[0];
    expect(Math.hypot(e.x1 - ga.x, e.y1 - ga.y)).toBeCloseTo(ga.r, 5);
    expect(Math.hypot(e.x2 - gb.x, e.y2 - gb.y)).toBeCloseTo(gb.r + 1.5, 5);
  });

  it('layout is deterministic and independent of flow order', () => {
    const a = buildGraph(flows);
    const b = buildGraph([...flows].reverse());
    const pos = (g: typeof a) => Object.fromEntries(g.nodes.map((n) => [n.id, [n.x, n.y]]));
    expect(pos(b)).toEqual(pos(a));
    expect(b.edges.map((e) => e.id)).toEqual(a.edges.map((e) => e.id));
  });

  it('workloads sit inside their namespace circle and do not overlap at hundreds of nodes', () => {
    const many = Array.from({ length: 300 }, (_, i) => flow({ source_name: 'w' + i, source_namespace: 'ns' + (i % 6), dest_name: 'api', dest_namespace: 'ns0' }));
    const g = buildGraph(many, { maxWorkloads: 1000 });
    expect(g.nodes.length).toBe(301);
    const groups = new Map(g.groups.map((x) => [x.name, x]));
    for (const n of g.nodes) {
      const c = groups.get(n.namespace)!;
      expect(Math.hypot(n.x - c.x, n.y - c.y)).toBeLessThanOrEqual(c.r);
      expect(n.x).toBeGreaterThan(0);
      expect(n.y).toBeGreaterThan(0);
      expect(n.x).toBeLessThan(g.width);
      expect(n.y).toBeLessThan(g.height);
    }
    // namespace circles are apart
    for (const a of g.groups) for (const b of g.groups) {
      if (a !== b) expect(Math.hypot(a.x - b.x, a.y - b.y)).toBeGreaterThan(a.r + b.r);
    }
    // nodes of one namespace keep a minimum distance
    const ns1 = g.nodes.filter((n) => n.namespace === 'ns1');
    let min = Infinity;
    for (const a of ns1) for (const b of ns1) if (a !== b) min = Math.min(min, Math.hypot(a.x - b.x, a.y - b.y));
    expect(min).toBeGreaterThan(12);
  });

  it('namespace circles of very different sizes do not overlap', () => {
    const sizes: [string, number][] = [['big-a', 60], ['tiny', 1], ['big-b', 60], ['mid', 37], ['small', 3]];
    const many = sizes.flatMap(([ns, n]) => Array.from({ length: n }, (_, i) => flow({ source_namespace: ns, source_name: 'w' + i, dest_namespace: ns, dest_name: 'w0' })));
    const g = buildGraph(many, { maxWorkloads: 1000 });
    expect(g.groups.map((x) => [x.name, x.workloads])).toEqual([...sizes].sort((a, b) => (a[0] < b[0] ? -1 : 1)));
    for (const a of g.groups) for (const b of g.groups) {
      if (a !== b) expect(Math.hypot(a.x - b.x, a.y - b.y), a.name + '/' + b.name).toBeGreaterThan(a.r + b.r);
    }
  });
});

describe('edge bundling', () => {
  it('edges between two namespaces share one bend point per verdict', () => {
    const flows = [0, 1, 2, 3].map((i) => flow({ source_name: 'c' + i, dest_name: 'd' + i, action: i === 3 ? 'Deny' : 'Allow' }));
    const g = buildGraph(flows);
    const allow = g.edges.filter((e) => e.action === 'Allow');
    expect(new Set(allow.map((e) => `${e.cx},${e.cy}`)).size).toBe(1);
    const deny = g.edges.find((e) => e.action === 'Deny')!;
    expect(Math.hypot(deny.cx - allow[0].cx, deny.cy - allow[0].cy)).toBeCloseTo(12, 5);
  });
  it('inside one namespace the curve bows off the straight line', () => {
    const c = controlPoint({ x: 0, y: 0 }, { x: 100, y: 0 }, { x: 50, y: 50 }, { x: 50, y: 50 }, 'Allow');
    expect(c).toEqual({ x: 50, y: 15 });
  });
  it('edgePath draws a quadratic curve, or a loop for self edges', () => {
    expect(edgePath({ x: 0, y: 0 }, { x: 100, y: 0 }, { x: 50, y: 12 })).toBe('M0,0 Q50,12 100,0');
    expect(edgePath({ x: 1, y: 1 }, { x: 1, y: 1 }, { x: 0, y: 0 })).toContain('c ');
  });
});
