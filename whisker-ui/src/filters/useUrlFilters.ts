// The URL query string is the source of truth for filters: state is read from it, changes
// push a history entry, and back/forward (popstate) re-read it.
import { useCallback, useEffect, useState } from 'react';
import { fromQuery, toQuery, type FilterState } from './filters';

export function useUrlFilters(): [FilterState, (next: FilterState) => void] {
  const [state, setState] = useState<FilterState>(() => fromQuery(window.location.search));
  useEffect(() => {
    const onPop = () => setState(fromQuery(window.location.search));
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const update = useCallback((next: FilterState) => {
    const q = toQuery(next);
    if (q !== window.location.search) {
      window.history.pushState(null, '', window.location.pathname + q + window.location.hash);
    }
    setState(fromQuery(q));
  }, []);
  return [state, update];
}
