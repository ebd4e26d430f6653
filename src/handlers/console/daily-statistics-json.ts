// The body of GET /statistics/daily, written as bytes (see JsonBytes): the DailyStatistics
// schema, each series' days and total derived from its parts by the rollup rules.
import type { DailyParts } from '../../data/rollups';
import type { RollupParts } from '../../data/schema';
import { totalOf, type DailyAnswer, type DailyStatistic } from '../../domain/rollup-read';
import { valueOf, type Aggregation } from '../../domain/rollup-rules';
import { WrittenAhead, jsonNumber, jsonPiece, type JsonBytes } from '../../http/json-bytes';

const piece = {
  comma: jsonPiece(','),
  worker: jsonPiece(',"worker":'),
  end: jsonPiece(']}'),
};

/** A RollupValue's fields (as rollupValue shapes them, in its order) as JSON text, without braces; ASCII. */
function rollupValueFields(aggregation: Aggregation, parts: RollupParts, days: number): string {
  const fields = `"value":${jsonNumber(valueOf(aggregation, parts, days))},"count":${jsonNumber(parts.count)}`;
  return aggregation === 'ratio'
    ? `${fields},"numerator":${jsonNumber(parts.numerator)},"denominator":${jsonNumber(parts.denominator)}`
    : fields;
}

/** Writes the end of a series over the same days: `,"days":[…],"total":{…}}`. */
class SeriesEnd {
  /** Each day's object up to its value's fields, after the comma that separates it from the day before. */
  private readonly dayOpen: string[];
  private readonly none: DailyParts;
  private readonly cell: RollupParts = { count: 0, sum: 0, numerator: 0, denominator: 0 };

  constructor(private readonly days: string[]) {
    this.dayOpen = days.map((day, d) => `${d > 0 ? ',' : ''}{"day":${JSON.stringify(day)},`);
    const zeros = new Float64Array(days.length);
    this.none = { count: zeros, sum: zeros, numerator: zeros, denominator: zeros };
  }

  write(out: JsonBytes, aggregation: Aggregation, parts: DailyParts | undefined): void {
    const { cell } = this;
    const daily = parts ?? this.none;
    // Days and numbers are ASCII, and one string of them written at once is faster than each piece written alone.
    let text = ',"days":[';
    for (let d = 0; d < this.days.length; d++) {
      cell.count = daily.count[d];
      cell.sum = daily.sum[d];
      cell.numerator = daily.numerator[d];
      cell.denominator = daily.denominator[d];
      // A RollupDay: a day's value, with its day first.
      text += `${this.dayOpen[d]}${rollupValueFields(aggregation, cell, 1)}}`;
    }
    out.ascii(`${text}],"total":{${rollupValueFields(aggregation, totalOf(daily), this.days.length)}}}`);
  }
}

/**
 * Workers' series ends written as each statistic is read (see dailyStatistics' `onRead`): on
 * PostgreSQL the database reads the next statistics meanwhile, and this thread would wait.
 */
export class SeriesWrittenAhead {
  private readonly ahead = new WrittenAhead();
  private readonly at = new Map<number, Map<string, [start: number, end: number]>>();
  private ends: SeriesEnd | undefined;

  add(s: number, statistic: DailyStatistic, days: string[], byWorker: Map<string, DailyParts>): void {
    this.ends ??= new SeriesEnd(days);
    const out = this.ahead.out;
    const at = this.at.get(s) ?? new Map<string, [number, number]>();
    this.at.set(s, at);
    for (const [workerId, parts] of byWorker) {
      const start = out.length;
      this.ends.write(out, statistic.aggregation, parts);
      at.set(workerId, [start, out.length]);
    }
  }

  /** Copies the end of statistic `s`'s series of `workerId` into `out`; false when none was written. */
  copy(out: JsonBytes, s: number, workerId: string): boolean {
    const range = this.at.get(s)?.get(workerId);
    if (range) this.ahead.copy(out, ...range);
    return range !== undefined;
  }
}

export function writeDailyStatistics(out: JsonBytes, { header, days, statistics, rows }: DailyAnswer, ahead?: SeriesWrittenAhead): void {
  const ends = new SeriesEnd(days);
  // Each object's text without its closing brace, to go on with the fields written here.
  const statisticOpen = statistics.map((statistic) => jsonPiece(JSON.stringify(statistic).slice(0, -1)));
  out.piece(jsonPiece(`${JSON.stringify(header).slice(0, -1)},"items":[`));
  let first = true;
  for (const { worker, parts } of rows) {
    const workerText = worker && jsonPiece(JSON.stringify(worker));
    statistics.forEach(({ aggregation }, s) => {
      if (!first) out.piece(piece.comma);
      first = false;
      out.piece(statisticOpen[s]);
      if (worker && workerText) {
        out.piece(piece.worker);
        out.piece(workerText);
        if (ahead?.copy(out, s, worker.id)) return;
      }
      ends.write(out, aggregation, parts[s]);
    });
  }
  out.piece(piece.end);
}
