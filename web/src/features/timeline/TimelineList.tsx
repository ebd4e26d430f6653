import { useWindowVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { Link } from 'wouter';
import { formatTime } from '../../components/time';
import { RowDetails } from './RowDetails';
import { itemHeights, rowSummary, rowType, type ListItem, type TimelineRow, type WorkerRef } from './rows';
import type { TimelineView } from './useTimeline';

/** How close to the end of what is loaded (in list items) the next page is asked for. */
const prefetchItems = 20;

/**
 * The timeline as one virtual list in the window's scroll: only the lines in view (and a few
 * around) are in the document, whatever the length of the day; the next page loads as the end
 * comes into view.
 */
export function TimelineList({
  view,
  timeZone,
  label,
  onWorkerFilter,
}: {
  view: TimelineView;
  timeZone: string;
  label: string;
  /** Shows every row of a worker's day (the "more" line of a group). */
  onWorkerFilter?: (worker: WorkerRef) => void;
}) {
  const listRef = useRef<HTMLUListElement>(null);
  const [scrollMargin, setScrollMargin] = useState(0);
  const [selected, setSelected] = useState<TimelineRow>();
  const { items } = view;
  // Where the list starts in the page, again whenever something above it loads and moves it.
  useLayoutEffect(() => {
    const measure = () => {
      const list = listRef.current;
      if (list) setScrollMargin(Math.round(list.getBoundingClientRect().top + window.scrollY));
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(document.body);
    return () => observer.disconnect();
  }, []);
  const virtualizer = useWindowVirtualizer({
    count: items.length,
    estimateSize: (i) => itemHeights[items[i].kind],
    getItemKey: (i) => items[i].key,
    overscan: 6,
    scrollMargin,
  });
  const virtualItems = virtualizer.getVirtualItems();
  const last = virtualItems.at(-1)?.index ?? 0;
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = view;
  useEffect(() => {
    if (hasNextPage && !isFetchingNextPage && last >= items.length - prefetchItems) void fetchNextPage();
  }, [last, items.length, hasNextPage, isFetchingNextPage, fetchNextPage]);

  return (
    <>
      <ul ref={listRef} className="virtual" aria-label={label} style={{ height: virtualizer.getTotalSize() }}>
        {virtualItems.map((v) => {
          const item = items[v.index];
          return (
            <li
              key={v.key}
              className={`virtual__${item.kind}`}
              style={{ transform: `translateY(${v.start - scrollMargin}px)`, height: v.size }}
              aria-setsize={items.length}
              aria-posinset={v.index + 1}
            >
              <Line item={item} timeZone={timeZone} onOpen={setSelected} onWorkerFilter={onWorkerFilter} />
            </li>
          );
        })}
      </ul>
      <p className="list-status" role="status">
        {isFetchingNextPage ? 'Loading more…' : hasNextPage ? '' : items.length ? 'End of the day.' : ''}
      </p>
      {selected && <RowDetails row={selected} timeZone={timeZone} onClose={() => setSelected(undefined)} />}
    </>
  );
}

function Line({
  item,
  timeZone,
  onOpen,
  onWorkerFilter,
}: {
  item: ListItem;
  timeZone: string;
  onOpen: (row: TimelineRow) => void;
  onWorkerFilter?: (worker: WorkerRef) => void;
}) {
  switch (item.kind) {
    case 'worker':
      return (
        <h2 className="line-worker">
          <Link href={`/workers/${item.worker.id}`}>{item.worker.displayName}</Link>
          {item.count !== undefined && (
            <span className="line-worker__count">
              {item.count} {item.count === 1 ? 'row' : 'rows'}
              {item.latestAt && `, latest ${formatTime(item.latestAt, timeZone)}`}
            </span>
          )}
        </h2>
      );
    case 'more':
      return (
        <button type="button" className="link-button line-more" onClick={() => onWorkerFilter?.(item.worker)}>
          All {item.count} rows of {item.worker.displayName} that day
        </button>
      );
    case 'row': {
      const { row } = item;
      return (
        <button type="button" className="row" onClick={() => onOpen(row)} aria-haspopup="dialog">
          <time className="row__time" dateTime={row.timestamp}>
            {formatTime(row.timestamp, timeZone)}
          </time>
          <span className={`badge badge--${row.kind}`}>{row.kind}</span>
          <span className="row__type">{rowType(row)}</span>
          <span className="row__app">{row.app.name}</span>
          <span className="row__meta">{rowSummary(row)}</span>
        </button>
      );
    }
  }
}
