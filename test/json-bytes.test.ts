import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { DailyParts } from '../src/data/rollups';
import type { DailyAnswer } from '../src/domain/rollup-read';
import { SeriesWrittenAhead, writeDailyStatistics } from '../src/handlers/console/daily-statistics-json';
import { JsonBytes, WrittenAhead, jsonNumber, jsonPiece } from '../src/http/json-bytes';

/** A JsonBytes whose chunks are kept, and the text they make once it has ended. */
function written(): { out: JsonBytes; chunks: Buffer[]; text: () => string } {
  const chunks: Buffer[] = [];
  const out = new JsonBytes((chunk) => chunks.push(Buffer.from(chunk)));
  return { out, chunks, text: () => (out.end(), Buffer.concat(chunks).toString('utf8')) };
}

describe('JSON written as bytes (JsonBytes)', () => {
  const numbers = fc.oneof(
    fc.nat(),
    fc.integer(),
    fc.constantFrom(0, -0, 9, 10, 99, 100, 1e15 - 1, 1e15, 2 ** 53, -(2 ** 53), 1e21, 1.5e-7, Number.MAX_VALUE, Number.MIN_VALUE),
    fc.double(),
    fc.constant(null),
  );

  it('writes every number as JSON.stringify does (null for what is not finite)', () => {
    fc.assert(
      fc.property(fc.array(numbers), (values) => {
        const { out, text } = written();
        out.ascii(`[${values.map(jsonNumber).join(',')}]`);
        assert.equal(text(), JSON.stringify(values));
      }),
      { numRuns: 500 },
    );
  });

  it('writes values, pieces and ASCII text whole across chunks, in UTF-8', () => {
    const { out, chunks, text } = written();
    const long = 'é€😀"\\\n'.repeat(200_000);
    const values: unknown[] = [];
    out.piece(jsonPiece('['));
    for (let i = 0; i < 3; i++) {
      out.value({ long, i });
      out.piece(jsonPiece(','));
      out.piece(jsonPiece(JSON.stringify('x'.repeat(40 + i))));
      out.piece(jsonPiece(','));
      out.ascii(JSON.stringify(`${'y'.repeat(700_000)}${i}`));
      out.piece(jsonPiece(','));
      values.push({ long, i }, 'x'.repeat(40 + i), `${'y'.repeat(700_000)}${i}`);
    }
    out.value(null);
    values.push(null);
    out.piece(jsonPiece(']'));
    assert.equal(text(), JSON.stringify(values));
    assert.ok(chunks.length > 3, 'the test spans several chunks');
  });
});

describe('JSON written ahead (WrittenAhead)', () => {
  it('copies back any range written, within a chunk or across chunks', () => {
    const ahead = new WrittenAhead();
    const pieces = Array.from({ length: 300 }, (_, i) => JSON.stringify({ i, text: 'x'.repeat((i * 7919) % 20_000) }));
    const ranges = pieces.map((text) => {
      const start = ahead.out.length;
      ahead.out.piece(jsonPiece(text));
      return [start, ahead.out.length] as const;
    });
    assert.ok(ahead.out.length > 2 * (1 << 20), 'the pieces span several chunks');
    const { out, text } = written();
    const order = pieces.map((_, i) => (i * 37) % pieces.length);
    order.forEach((i) => ahead.copy(out, ...ranges[i]));
    assert.equal(text(), order.map((i) => pieces[i]).join(''));
  });
});

describe('The body of /statistics/daily (writeDailyStatistics)', () => {
  const aggregations = ['count', 'sumField', 'durationMinutes', 'rate', 'ratio'] as const;
  const part = fc.oneof(fc.nat({ max: 1000 }), fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }));

  it('says what the contract shapes from the parts: every day, its value per aggregation, the total', () => {
    const answers = fc.integer({ min: 1, max: 5 }).chain((dayCount) =>
      fc.record({
        days: fc.constant(Array.from({ length: dayCount }, (_, d) => `2026-03-${String(d + 1).padStart(2, '0')}`)),
        statistics: fc.array(fc.constantFrom(...aggregations), { minLength: 1, maxLength: 3 }),
        rows: fc.array(
          fc.record({
            worker: fc.option(fc.record({ id: fc.string(), displayName: fc.string() }), { nil: undefined }),
            parts: fc.array(
              fc.option(fc.array(fc.array(part, { minLength: 4, maxLength: 4 }), { minLength: dayCount, maxLength: dayCount }), {
                nil: undefined,
              }),
              {
                minLength: 3,
                maxLength: 3,
              },
            ),
          }),
          { maxLength: 4 },
        ),
        nextCursor: fc.option(fc.string()),
      }),
    );
    fc.assert(
      fc.property(answers, ({ days, statistics, rows: generated, nextCursor }) => {
        // Workers of a page are distinct.
        const rows = generated.map(({ worker, parts }, i) => ({ worker: worker && { ...worker, id: `${worker.id}#${i}` }, parts }));
        const answer: DailyAnswer = {
          header: { timeZone: 'Europe/Berlin', from: days[0], to: days[days.length - 1], nextCursor },
          days,
          statistics: statistics.map((aggregation, s) => ({
            statisticId: `app.s${s}`,
            app: { id: 'app_1', slug: 'app', name: 'Äpp "1"' },
            label: `Label ${s} ✓`,
            pillar: 'DELIVERY',
            format: 'number',
            aggregation,
            status: { state: 'current', computedThrough: '2026-03-09T10:00:00.000Z' },
          })),
          rows: rows.map(({ worker, parts }) => ({
            ...(worker ? { worker } : {}),
            parts: parts.map((byDay) => byDay && dailyParts(byDay)),
          })),
        };
        // The oracle: the specification's values, from the same parts, as objects.
        const expected = {
          timeZone: 'Europe/Berlin',
          from: days[0],
          to: days[days.length - 1],
          nextCursor,
          items: rows.flatMap(({ worker, parts }) =>
            answer.statistics.map((statistic, s) => {
              const byDay = parts[s] ?? days.map(() => [0, 0, 0, 0]);
              const value = ([count, sum, numerator, denominator]: number[], n: number) => {
                const v = {
                  count,
                  sumField: sum,
                  durationMinutes: sum / 60,
                  rate: count / n,
                  ratio: denominator === 0 ? null : numerator / denominator,
                }[statistic.aggregation];
                return statistic.aggregation === 'ratio' ? { value: v, count, numerator, denominator } : { value: v, count };
              };
              const total = byDay.reduce((t, cell) => t.map((x, i) => x + cell[i]), [0, 0, 0, 0]);
              return {
                ...statistic,
                ...(worker ? { worker } : {}),
                days: byDay.map((cell, d) => ({ day: days[d], ...value(cell, 1) })),
                total: value(total, days.length),
              };
            }),
          ),
        };
        const { out, text } = written();
        writeDailyStatistics(out, answer);
        const body = text();
        assert.deepEqual(JSON.parse(body), JSON.parse(JSON.stringify(expected)));

        // The same with the workers' series ends written ahead, a statistic at a time, in another order.
        const ahead = new SeriesWrittenAhead();
        [...answer.statistics.keys()].reverse().forEach((s) => {
          const byWorker = new Map(
            answer.rows.flatMap(({ worker, parts }) => (worker && parts[s] ? [[worker.id, parts[s]] as const] : [])),
          );
          ahead.add(s, answer.statistics[s], days, byWorker);
        });
        const again = written();
        writeDailyStatistics(again.out, answer, ahead);
        assert.equal(again.text(), body);
      }),
      { numRuns: 300 },
    );
  });
});

function dailyParts(byDay: number[][]): DailyParts {
  const part = (i: number) => Float64Array.from(byDay, (cell) => cell[i]);
  return { count: part(0), sum: part(1), numerator: part(2), denominator: part(3) };
}
