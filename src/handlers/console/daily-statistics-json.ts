// The body of GET /statistics/daily, written as bytes (see JsonBytes): the DailyStatistics
// schema, each series' days and total derived from its parts by the rollup rules.
import type { DailyParts } from '../../data/rollups';
import type { RollupParts } from '../../data/schema';
import { rollupValue, totalOf, type DailyAnswer } from '../../domain/rollup-read';
import { valueOf } from '../../domain/rollup-rules';
import { jsonPiece, type JsonBytes } from '../../http/json-bytes';

const piece = {
  comma: jsonPiece(','),
  worker: jsonPiece(',"worker":'),
  days: jsonPiece(',"days":['),
  total: jsonPiece('],"total":'),
  count: jsonPiece(',"count":'),
  numerator: jsonPiece(',"numerator":'),
  denominator: jsonPiece(',"denominator":'),
  close: jsonPiece('}'),
  end: jsonPiece(']}'),
};

export function writeDailyStatistics(out: JsonBytes, { header, days, statistics, rows }: DailyAnswer): void {
  // Each object's text without its closing brace, to go on with the fields written here.
  const open = (value: object) => jsonPiece(JSON.stringify(value).slice(0, -1));
  const dayOpen = days.map((day) => jsonPiece(`{"day":${JSON.stringify(day)},"value":`));
  const statisticOpen = statistics.map(open);
  const none = noParts(days.length);
  const cell: RollupParts = { count: 0, sum: 0, numerator: 0, denominator: 0 };
  out.piece(jsonPiece(`${JSON.stringify(header).slice(0, -1)},"items":[`));
  let first = true;
  for (const { worker, parts } of rows) {
    const workerText = worker && jsonPiece(JSON.stringify(worker));
    statistics.forEach(({ aggregation }, s) => {
      if (!first) out.piece(piece.comma);
      first = false;
      out.piece(statisticOpen[s]);
      if (workerText) {
        out.piece(piece.worker);
        out.piece(workerText);
      }
      out.piece(piece.days);
      const daily = parts[s] ?? none;
      for (let d = 0; d < days.length; d++) {
        cell.count = daily.count[d];
        cell.sum = daily.sum[d];
        cell.numerator = daily.numerator[d];
        cell.denominator = daily.denominator[d];
        if (d > 0) out.piece(piece.comma);
        // A RollupDay: as rollupValue shapes a value, with its day first.
        out.piece(dayOpen[d]);
        out.number(valueOf(aggregation, cell, 1));
        out.piece(piece.count);
        out.number(cell.count);
        if (aggregation === 'ratio') {
          out.piece(piece.numerator);
          out.number(cell.numerator);
          out.piece(piece.denominator);
          out.number(cell.denominator);
        }
        out.piece(piece.close);
      }
      out.piece(piece.total);
      out.value(rollupValue(aggregation, totalOf(daily), days.length));
      out.piece(piece.close);
    });
  }
  out.piece(piece.end);
}

function noParts(days: number): DailyParts {
  const zeros = new Float64Array(days);
  return { count: zeros, sum: zeros, numerator: zeros, denominator: zeros };
}
