// Credentials: a bearer token (from "#token=..." once, or typed) or basic user/password.
// Kept in sessionStorage only, never in the URL after load.

export type Credential = { kind: 'bearer'; token: string } | { kind: 'basic'; user: string; password: string };

const KEY = 'whisker.credential';

export interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** Splits a token out of a location fragment; returns the fragment without it. */
export function takeTokenFromFragment(hash: string): { token: string | null; rest: string } {
  const raw = hash.startsWith('#') ? hash.slice(1) : hash;
  if (raw === '') return { token: null, rest: '' };
  const params = new URLSearchParams(raw);
  const token = params.get('token');
  if (token === null) return { token: null, rest: hash };
  params.delete('token');
  const rest = params.toString();
  return { token: token === '' ? null : token, rest: rest === '' ? '' : '#' + rest };
}

export function authorizationHeader(c: Credential): string {
  if (c.kind === 'bearer') return 'Bearer ' + c.token;
  const bytes = new TextEncoder().encode(c.user + ':' + c.password);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return 'Basic ' + btoa(bin);
}

export function loadCredential(store: KeyValueStore): Credential | null {
  const raw = store.getItem(KEY);
  if (!raw) return null;
  try {
    const c = JSON.parse(raw) as Credential;
    if (c.kind === 'bearer' && typeof c.token === 'string' && c.token !== '') return c;
    if (c.kind === 'basic' && typeof c.user === 'string' && typeof c.password === 'string') return c;
  } catch {
    // corrupt entry: fall through and forget it
  }
  store.removeItem(KEY);
  return null;
}

export function saveCredential(store: KeyValueStore, c: Credential | null): void {
  if (c === null) store.removeItem(KEY);
  else store.setItem(KEY, JSON.stringify(c));
}

/**
 * Start-up: a fragment token wins and is stored; the address bar loses it (replaceState, so
 * back does not bring it back).
 */
export function initCredential(
  loc: { hash: string; pathname: string; search: string },
  store: KeyValueStore,
  replaceUrl: (url: string) => void,
): Credential | null {
  const { token, rest } = takeTokenFromFragment(loc.hash);
  if (loc.hash !== rest) replaceUrl(loc.pathname + loc.search + rest);
  if (token !== null) {
    const c: Credential = { kind: 'bearer', token };
    saveCredential(store, c);
    return c;
  }
  return loadCredential(store);
}
