import type { ReactNode } from 'react';
import { Empty, ErrorState, Loading } from './States';

/** What a page needs from a query (useQuery or useInfiniteQuery). */
interface Query<T> {
  isPending: boolean;
  isError: boolean;
  error: unknown;
  data: T | undefined;
  refetch: () => unknown;
}

/**
 * A request's three states in one place: loading, its error with a retry, then its data;
 * `empty` (shown when `isEmpty` holds) is the empty state that says what to do next.
 */
export function QueryView<T>({
  query,
  what,
  isEmpty,
  empty,
  children,
}: {
  query: Query<T>;
  /** Names the data in the error message: "Could not load {what}". */
  what: string;
  isEmpty?: (data: T) => boolean;
  empty?: ReactNode;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) return <Loading />;
  if (query.isError || query.data === undefined) return <ErrorState error={query.error} retry={() => void query.refetch()} what={what} />;
  if (isEmpty?.(query.data)) return empty ?? <Empty title="Nothing here yet" />;
  return children(query.data);
}

/**
 * A table with a caption for screen readers and a header row. It scrolls sideways on a narrow
 * window, so its frame takes the focus (arrow keys scroll it) and is named by the caption.
 */
export function DataTable({ caption, columns, children }: { caption: string; columns: ReactNode[]; children: ReactNode }) {
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label={caption}>
      <table className="table">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column, i) => (
              <th key={i} scope="col">
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** A hidden column header, for a column of buttons. */
export const actionsColumn = <span className="visually-hidden">Actions</span>;

/** The next page of an infinite list, on request. */
export function MoreButton({
  query,
  label,
}: {
  query: { hasNextPage: boolean; isFetchingNextPage: boolean; fetchNextPage: () => unknown };
  label: string;
}) {
  if (!query.hasNextPage) return null;
  return (
    <button
      type="button"
      className="button button--secondary"
      disabled={query.isFetchingNextPage}
      onClick={() => void query.fetchNextPage()}
    >
      {query.isFetchingNextPage ? 'Loading…' : label}
    </button>
  );
}
