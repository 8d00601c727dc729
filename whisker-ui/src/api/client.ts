// Fetch wrapper: relative URLs (a path prefix in front of the backend keeps working), the
// credential header, and the backend's JSON error `message` surfaced as ApiError.

import { authorizationHeader, type Credential } from '../auth/auth';
import type { ErrorBody, FlowResponse, HintItem, Page, PolicyStat } from './types';
import { readSse } from './sse';

export class ApiError extends Error {
  constructor(readonly status: number, message: string, readonly parameter?: string) {
    super(message);
    this.name = 'ApiError';
  }
}

export type CredentialSource = () => Credential | null;

async function errorOf(res: Response): Promise<ApiError> {
  let body: Partial<ErrorBody> | null = null;
  try {
    body = (await res.json()) as Partial<ErrorBody>;
  } catch {
    // not JSON (a proxy's page): fall back to the status line
  }
  const msg = body?.message || `${res.status} ${res.statusText || body?.error || 'error'}`;
  return new ApiError(res.status, msg, body?.parameter);
}

export class Api {
  constructor(private readonly credential: CredentialSource, private readonly base = '') {}

  private headers(accept: string): HeadersInit {
    const h: Record<string, string> = { Accept: accept };
    const c = this.credential();
    if (c) h.Authorization = authorizationHeader(c);
    return h;
  }

  async get<T>(path: string, params: URLSearchParams, signal?: AbortSignal): Promise<T> {
    const qs = params.toString();
    const res = await fetch(this.base + path + (qs ? '?' + qs : ''), { headers: this.headers('application/json'), signal });
    if (!res.ok) throw await errorOf(res);
    return (await res.json()) as T;
  }

  flows(params: URLSearchParams, page: number, pageSize: number, signal?: AbortSignal): Promise<Page<FlowResponse>> {
    const p = new URLSearchParams(params);
    p.set('page', String(page));
    p.set('pageSize', String(pageSize));
    return this.get('flows', p, signal);
  }

  hints(type: string, params: URLSearchParams, signal?: AbortSignal): Promise<Page<HintItem>> {
    const p = new URLSearchParams(params);
    p.set('type', type);
    return this.get('flows-filter-hints', p, signal);
  }

  statistics(params: URLSearchParams, signal?: AbortSignal): Promise<{ items: PolicyStat[] }> {
    return this.get('policies/statistics', params, signal);
  }

  /** Streams flows?watch=true until the stream ends or the signal aborts. */
  async watch(params: URLSearchParams, onFlow: (f: FlowResponse) => void, signal: AbortSignal): Promise<void> {
    const p = new URLSearchParams(params);
    p.set('watch', 'true');
    const res = await fetch(this.base + 'flows?' + p.toString(), { headers: this.headers('text/event-stream'), signal });
    if (!res.ok) throw await errorOf(res);
    if (!res.body) throw new ApiError(0, 'live stream: the response has no body');
    let failure: ApiError | null = null;
    await readSse(res.body, (e) => {
      if (e.event === 'error') {
        let m = e.data;
        try {
          m = (JSON.parse(e.data) as ErrorBody).message ?? m;
        } catch {
          // plain text error
        }
        failure = new ApiError(502, 'live stream ended: ' + m);
        return;
      }
      if (e.event === 'message' && e.data !== '') onFlow(JSON.parse(e.data) as FlowResponse);
    });
    if (failure) throw failure;
  }
}

/** The backend's answer to a pageSize above goldmane's MAX_PAGE_SIZE (a 400 naming the field). */
export function isPageSizeError(e: unknown): boolean {
  return e instanceof ApiError && e.status === 400 && (e.parameter === 'pageSize' || /page_?size/i.test(e.message));
}

export type PageSource = (page: number, pageSize: number) => Promise<Page<FlowResponse>>;

/**
 * Loads every page, calling onPage as each arrives. A small first page paints quickly; the
 * rest comes in pages of pageSize from the start again (the caller drops the repeated ids),
 * because the server's offsets are page × pageSize. A pageSize above the server's maximum is
 * halved until it is accepted.
 */
export async function loadAllFlows(
  fetchPage: PageSource,
  firstPageSize: number,
  pageSize: number,
  maxRows: number,
  onPage: (items: FlowResponse[], total: number, done: boolean) => void,
): Promise<void> {
  let size = Math.min(firstPageSize, pageSize);
  const get = async (page: number): Promise<Page<FlowResponse>> => {
    for (;;) {
      try {
        return await fetchPage(page, size);
      } catch (e) {
        if (!isPageSizeError(e) || size <= 1) throw e;
        size = Math.max(1, Math.floor(size / 2));
      }
    }
  };
  const first = await get(0);
  const firstDone = first.items.length === 0 || first.meta.totalPages <= 1 || first.items.length >= maxRows;
  onPage(first.items, first.meta.totalResults, firstDone);
  if (firstDone) return;
  size = Math.max(size, pageSize);
  let loaded = 0;
  for (let page = 0; ; page++) {
    const res = await get(page);
    loaded += res.items.length;
    const done = res.items.length === 0 || page + 1 >= res.meta.totalPages || loaded >= maxRows;
    onPage(res.items, res.meta.totalResults, done);
    if (done) return;
  }
}
