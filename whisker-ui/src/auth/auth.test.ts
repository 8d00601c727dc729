import { describe, expect, it } from 'vitest';
import { authorizationHeader, initCredential, loadCredential, saveCredential, takeTokenFromFragment, type KeyValueStore } from './auth';

function memStore(): KeyValueStore & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return { map, getItem: (k) => map.get(k) ?? null, setItem: (k, v) => void map.set(k, v), removeItem: (k) => void map.delete(k) };
}

describe('takeTokenFromFragment', () => {
  it('takes the token and keeps other fragment parameters', () => {
    expect(takeTokenFromFragment('#token=abc&x=1')).toEqual({ token: 'abc', rest: '#x=1' });
    expect(takeTokenFromFragment('#token=a%2Bb')).toEqual({ token: 'a+b', rest: '' });
  });
  it('no token: fragment unchanged', () => {
    expect(takeTokenFromFragment('#section')).toEqual({ token: null, rest: '#section' });
    expect(takeTokenFromFragment('')).toEqual({ token: null, rest: '' });
  });
  it('empty token is no token but is still removed', () => {
    expect(takeTokenFromFragment('#token=')).toEqual({ token: null, rest: '' });
  });
});

describe('authorizationHeader', () => {
  it('bearer', () => expect(authorizationHeader({ kind: 'bearer', token: 't0k' })).toBe('Bearer t0k'));
  it('basic encodes UTF-8 user:password', () => {
    expect(authorizationHeader({ kind: 'basic', user: 'admin', password: 'pa:ss' })).toBe('Basic YWRtaW46cGE6c3M=');
    expect(authorizationHeader({ kind: 'basic', user: 'jürgen', password: 'ü' })).toBe('Basic asO8cmdlbjrDvA==');
  });
});

describe('initCredential', () => {
  it('stores a fragment token and removes it from the address bar', () => {
    const store = memStore();
    const urls: string[] = [];
    const c = initCredential({ hash: '#token=secret', pathname: '/ui/', search: '?view=graph' }, store, (u) => urls.push(u));
    expect(c).toEqual({ kind: 'bearer', token: 'secret' });
    expect(urls).toEqual(['/ui/?view=graph']);
    expect(urls.join()).not.toContain('secret');
    expect(loadCredential(store)).toEqual(c);
  });
  it('without a fragment uses the stored credential and leaves the URL alone', () => {
    const store = memStore();
    saveCredential(store, { kind: 'basic', user: 'u', password: 'p' });
    const urls: string[] = [];
    expect(initCredential({ hash: '', pathname: '/', search: '' }, store, (u) => urls.push(u))).toEqual({ kind: 'basic', user: 'u', password: 'p' });
    expect(urls).toEqual([]);
  });
  it('a corrupt stored entry is dropped', () => {
    const store = memStore();
    store.setItem('whisker.credential', '{not json');
    expect(loadCredential(store)).toBeNull();
    expect(store.map.size).toBe(0);
  });
  it('saveCredential(null) forgets', () => {
    const store = memStore();
    saveCredential(store, { kind: 'bearer', token: 'x' });
    saveCredential(store, null);
    expect(loadCredential(store)).toBeNull();
  });
});
