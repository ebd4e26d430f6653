import { useEffect } from 'react';

/** The window title names the page, which screen readers announce on navigation. */
export function useTitle(page: string): void {
  useEffect(() => {
    document.title = `${page} · Ingest console`;
  }, [page]);
}
