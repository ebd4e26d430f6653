// The timed reads of timeRead (rollups.ts), in a process of their own: `node read-client.js '<ReadRequest as JSON>'`
// prints the ReadFigures as JSON.
export interface ReadFigures {
  name: string;
  requests: number;
  p50Ms: number;
  maxMs: number;
  /** Each request's time, in the order made. */
  eachMs: number[];
  series: number;
  dayCells: number;
  bytes: number;
}

export interface ReadRequest {
  base: string;
  cookie: string;
  name: string;
  pathAndQuery: string;
  times: number;
}

async function timedReads({ base, cookie, name, pathAndQuery, times }: ReadRequest): Promise<ReadFigures> {
  const ms: number[] = [];
  let text = '';
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    const res = await fetch(`${base}${pathAndQuery}`, { headers: { cookie } });
    text = await res.text();
    ms.push(performance.now() - started);
    if (res.status !== 200) throw new Error(`${pathAndQuery} answered ${res.status}: ${text.slice(0, 300)}`);
  }
  // The last answer only, once the reads are done: parsing each would leave its garbage to the next read.
  const body = JSON.parse(text || '{"items":[]}') as { items: { days: unknown[] }[] };
  const sorted = [...ms].sort((a, b) => a - b);
  return {
    name,
    requests: times,
    p50Ms: Math.round(sorted[Math.floor(sorted.length / 2)] as number),
    maxMs: Math.round(sorted.at(-1) as number),
    eachMs: ms.map(Math.round),
    series: body.items.length,
    dayCells: body.items.reduce((n, s) => n + s.days.length, 0),
    bytes: text.length,
  };
}

timedReads(JSON.parse(process.argv[2] ?? '{}') as ReadRequest).then(
  (figures) => process.stdout.write(JSON.stringify(figures)),
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  },
);
