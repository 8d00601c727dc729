import { describe, expect, it } from 'vitest';
import { activeCount, apiParams, emptyFilters, fromQuery, listParams, toApiFilters, toQuery, type FilterState } from './filters';

function sample(): FilterState {
  return {
    ...emptyFilters(),
    source_names: [{ type: 'Exact', value: 'client-*' }],
    source_namespaces: [{ type: 'Fuzzy', value: 'demo' }],
    dest_namespaces: [{ type: 'Exact', value: 'demo-b' }, { type: 'Exact', value: 'kube-system' }],
    protocols: [{ type: 'Exact', value: 'tcp' }],
    dest_ports: [8080, 53],
    actions: ['Deny'],
    pending_actions: ['Allow'],
    reporters: ['Dst'],
    policies: [{ kind: 'GlobalNetworkPolicy', tier: 'security', namespace: '', name: 'deny-all', action: 'Deny' }],
    startTimeGte: -900,
    startTimeLt: 0,
    view: 'graph',
    sortBy: 'DestNamespace',
  };
}

describe('URL <-> filter state', () => {
  it('round-trips every field', () => {
    const f = sample();
    expect(fromQuery(toQuery(f))).toEqual(f);
  });
  it('empty state is an empty query', () => {
    expect(toQuery(emptyFilters())).toBe('');
    expect(fromQuery('')).toEqual(emptyFilters());
  });
  it('writes readable parameters with ~ for fuzzy', () => {
    const q = new URLSearchParams(toQuery(sample()).slice(1));
    expect(q.getAll('source_namespaces')).toEqual(['~demo']);
    expect(q.getAll('dest_ports')).toEqual(['8080', '53']);
    expect(q.get('from')).toBe('-900');
    expect(q.get('to')).toBeNull();
    expect(q.get('view')).toBe('graph');
    expect(q.get('sort')).toBe('DestNamespace');
  });
  it('drops malformed values instead of failing', () => {
    const f = fromQuery('?dest_ports=abc&dest_ports=70000&dest_ports=22&actions=Maybe&actions=Allow&reporters=Both&policies=a|b&from=soon&view=nope');
    expect(f.dest_ports).toEqual([22]);
    expect(f.actions).toEqual(['Allow']);
    expect(f.reporters).toEqual([]);
    expect(f.policies).toEqual([]);
    expect(f.startTimeGte).toBe(0);
    expect(f.view).toBe('table');
    expect(fromQuery('?sort=Bogus').sortBy).toBe('Time');
  });
});

describe('filter state -> API', () => {
  it('builds the filters JSON of API.md, leaving out empty keys', () => {
    expect(toApiFilters(sample())).toEqual({
      source_names: [{ type: 'Exact', value: 'client-*' }],
      source_namespaces: [{ type: 'Fuzzy', value: 'demo' }],
      dest_namespaces: [{ type: 'Exact', value: 'demo-b' }, { type: 'Exact', value: 'kube-system' }],
      protocols: [{ type: 'Exact', value: 'tcp' }],
      dest_ports: [{ type: 'Exact', value: 8080 }, { type: 'Exact', value: 53 }],
      actions: ['Deny'],
      pending_actions: ['Allow'],
      reporters: ['Dst'],
      policies: [{ kind: 'GlobalNetworkPolicy', tier: 'security', name: 'deny-all', action: 'Deny' }],
    });
  });
  it('no filters: no filters parameter at all', () => {
    expect(apiParams(emptyFilters()).toString()).toBe('');
  });
  it('time range and filters as query parameters', () => {
    const p = apiParams({ ...emptyFilters(), actions: ['Allow'], startTimeGte: 1700000000, startTimeLt: -60 });
    expect(JSON.parse(p.get('filters')!)).toEqual({ actions: ['Allow'] });
    expect(p.get('startTimeGte')).toBe('1700000000');
    expect(p.get('startTimeLt')).toBe('-60');
    expect(p.has('view')).toBe(false);
  });
  it('sortBy goes to GET flows only, never to hints or watch parameters', () => {
    const f = { ...emptyFilters(), sortBy: 'SourceName' as const };
    expect(listParams(f).get('sortBy')).toBe('SourceName');
    expect(apiParams(f).has('sortBy')).toBe(false);
    expect(listParams(emptyFilters()).has('sortBy')).toBe(false);
  });
  it('counts active filters', () => {
    expect(activeCount(emptyFilters())).toBe(0);
    expect(activeCount(sample())).toBe(12);
  });
});
