import { QueryClient } from '@tanstack/react-query';
import createQueryHooks from 'openapi-react-query';
import { ApiFailure, api } from './client';

/** Query defaults: a client error (4xx) is final, a network or server error is tried twice more. */
export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 30_000,
      retry: (failures, error) => !(error instanceof ApiFailure && error.status < 500) && failures < 2,
      refetchOnWindowFocus: false,
    },
  },
});

/** useQuery / useInfiniteQuery / useMutation over the typed client; keys are [method, path, init]. */
export const $api = createQueryHooks(api);

/** Refetches every GET whose path starts with one of these (after a change). */
export function invalidate(...paths: string[]): Promise<void> {
  return queryClient.invalidateQueries({
    predicate: (query) => {
      const [method, path] = query.queryKey;
      return method === 'get' && typeof path === 'string' && paths.some((prefix) => path.startsWith(prefix));
    },
  });
}

/**
 * Options of a keyset-paged list for `$api.useInfiniteQuery`: the first page without a cursor, then
 * each page's `nextCursor` until it is null. The first page param must be null, which the client
 * leaves out of the query: left undefined, openapi-react-query would send `cursor=0`.
 */
export const cursorPages = {
  initialPageParam: null,
  getNextPageParam: (page: { nextCursor: string | null }) => page.nextCursor ?? undefined,
  pageParamName: 'cursor',
} as const;

/** How often a page looks for what is new (polling: the console API has no push). */
export const pollMs = 5_000;
