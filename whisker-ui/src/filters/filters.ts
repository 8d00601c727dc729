// Filter state: parsed from and written to the URL query string (the single source of truth),
// and turned into the backend's `filters` JSON and time parameters.

export type MatchType = 'Exact' | 'Fuzzy';
export interface StringMatch {
  type: MatchType;
  value: string;
}
export interface PolicyMatch {
  kind: string;
  tier: string;
  namespace: string;
  name: string;
  action: string;
}

export const STRING_KEYS = ['source_names', 'source_namespaces', 'dest_names', 'dest_namespaces', 'protocols'] as const;
export type StringKey = (typeof STRING_KEYS)[number];
export const ENUM_KEYS = ['actions', 'pending_actions', 'reporters'] as const;
export type EnumKey = (typeof ENUM_KEYS)[number];
export const ENUM_VALUES: Record<EnumKey, readonly string[]> = {
  actions: ['Allow', 'Deny', 'Pass'],
  pending_actions: ['Allow', 'Deny', 'Pass'],
  reporters: ['Src', 'Dst'],
};
export const VIEWS = ['table', 'graph', 'policies'] as const;
/** The API's sortBy values; Time (newest first) is the default. */
export const SORTS = ['Time', 'SourceName', 'SourceNamespace', 'SourceType', 'DestName', 'DestNamespace', 'DestType'] as const;
export type Sort = (typeof SORTS)[number];
export type View = (typeof VIEWS)[number];

export interface FilterState {
  source_names: StringMatch[];
  source_namespaces: StringMatch[];
  dest_names: StringMatch[];
  dest_namespaces: StringMatch[];
  protocols: StringMatch[];
  dest_ports: number[];
  actions: string[];
  pending_actions: string[];
  reporters: string[];
  policies: PolicyMatch[];
  /** seconds: > 0 absolute, < 0 relative to now, 0 = goldmane's default */
  startTimeGte: number;
  startTimeLt: number;
  view: View;
  sortBy: Sort;
}

export function emptyFilters(): FilterState {
  return {
    source_names: [], source_namespaces: [], dest_names: [], dest_namespaces: [], protocols: [],
    dest_ports: [], actions: [], pending_actions: [], reporters: [], policies: [],
    startTimeGte: 0, startTimeLt: 0, view: 'table', sortBy: 'Time',
  };
}

// In the URL a leading "~" marks a substring (Fuzzy) match: ?source_namespaces=~demo
export function encodeMatch(m: StringMatch): string {
  return (m.type === 'Fuzzy' ? '~' : '') + m.value;
}
export function decodeMatch(s: string): StringMatch {
  return s.startsWith('~') ? { type: 'Fuzzy', value: s.slice(1) } : { type: 'Exact', value: s };
}

const POLICY_FIELDS = ['kind', 'tier', 'namespace', 'name', 'action'] as const;
// Kubernetes names cannot hold "|", so it separates the five fields.
export function encodePolicy(p: PolicyMatch): string {
  return POLICY_FIELDS.map((f) => p[f]).join('|');
}
export function decodePolicy(s: string): PolicyMatch | null {
  const parts = s.split('|');
  if (parts.length !== POLICY_FIELDS.length) return null;
  const [kind, tier, namespace, name, action] = parts;
  return { kind, tier, namespace, name, action };
}

function intParam(v: string | null): number {
  if (v === null || !/^-?\d+$/.test(v)) return 0;
  return Number(v);
}

/** Query string → state. Unknown or malformed values are dropped, never thrown. */
export function fromQuery(search: string): FilterState {
  const q = new URLSearchParams(search.startsWith('?') ? search.slice(1) : search);
  const f = emptyFilters();
  for (const k of STRING_KEYS) {
    f[k] = q.getAll(k).filter((v) => v !== '' && v !== '~').map(decodeMatch);
  }
  f.dest_ports = q.getAll('dest_ports').filter((v) => /^\d+$/.test(v)).map(Number).filter((n) => n <= 65535);
  for (const k of ENUM_KEYS) {
    f[k] = q.getAll(k).filter((v) => ENUM_VALUES[k].includes(v));
  }
  f.policies = q.getAll('policies').map(decodePolicy).filter((p): p is PolicyMatch => p !== null);
  f.startTimeGte = intParam(q.get('from'));
  f.startTimeLt = intParam(q.get('to'));
  const view = q.get('view');
  f.view = (VIEWS as readonly string[]).includes(view ?? '') ? (view as View) : 'table';
  const sort = q.get('sort');
  f.sortBy = (SORTS as readonly string[]).includes(sort ?? '') ? (sort as Sort) : 'Time';
  return f;
}

/** State → query string (with "?" or empty), stable order so equal states give equal URLs. */
export function toQuery(f: FilterState): string {
  const q = new URLSearchParams();
  if (f.view !== 'table') q.set('view', f.view);
  if (f.sortBy !== 'Time') q.set('sort', f.sortBy);
  for (const k of STRING_KEYS) for (const m of f[k]) q.append(k, encodeMatch(m));
  for (const p of f.dest_ports) q.append('dest_ports', String(p));
  for (const k of ENUM_KEYS) for (const v of f[k]) q.append(k, v);
  for (const p of f.policies) q.append('policies', encodePolicy(p));
  if (f.startTimeGte !== 0) q.set('from', String(f.startTimeGte));
  if (f.startTimeLt !== 0) q.set('to', String(f.startTimeLt));
  const s = q.toString();
  return s === '' ? '' : '?' + s;
}

/** The backend's `filters` JSON (API.md); empty keys are left out, so no filter is "{}". */
export function toApiFilters(f: FilterState): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of STRING_KEYS) {
    if (f[k].length > 0) out[k] = f[k].map((m) => ({ type: m.type, value: m.value }));
  }
  if (f.dest_ports.length > 0) out.dest_ports = f.dest_ports.map((p) => ({ type: 'Exact', value: p }));
  for (const k of ENUM_KEYS) if (f[k].length > 0) out[k] = [...f[k]];
  if (f.policies.length > 0) {
    out.policies = f.policies.map((p) => {
      const m: Record<string, string> = {};
      for (const field of POLICY_FIELDS) if (p[field] !== '') m[field] = p[field];
      return m;
    });
  }
  return out;
}

/** Query parameters of GET flows (not for watch or hints): apiParams plus sortBy. */
export function listParams(f: FilterState): URLSearchParams {
  const p = apiParams(f);
  if (f.sortBy !== 'Time') p.set('sortBy', f.sortBy);
  return p;
}

/** Query parameters for flows / hints calls: filters JSON plus the time range. */
export function apiParams(f: FilterState): URLSearchParams {
  const p = new URLSearchParams();
  const filters = toApiFilters(f);
  if (Object.keys(filters).length > 0) p.set('filters', JSON.stringify(filters));
  if (f.startTimeGte !== 0) p.set('startTimeGte', String(f.startTimeGte));
  if (f.startTimeLt !== 0) p.set('startTimeLt', String(f.startTimeLt));
  return p;
}

/** Counts the active filter values (the time range counts as one). */
export function activeCount(f: FilterState): number {
  let n = f.dest_ports.length + f.policies.length;
  for (const k of STRING_KEYS) n += f[k].length;
  for (const k of ENUM_KEYS) n += f[k].length;
  if (f.startTimeGte !== 0 || f.startTimeLt !== 0) n++;
  return n;
}

/** The filter part of the state without the view: the key the table reloads on. */
export function filterKey(f: FilterState): string {
  return toQuery({ ...f, view: 'table' });
}
