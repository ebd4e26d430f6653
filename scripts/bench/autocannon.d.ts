// The part of autocannon's programmatic API the benchmark and the soak use (the package ships no types).
declare module 'autocannon' {
  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p99: number;
    p99_9: number;
    [percentile: string]: number;
  }
  interface Result {
    duration: number;
    start: Date;
    finish: Date;
    errors: number;
    timeouts: number;
    non2xx: number;
    latency: Histogram;
    requests: Histogram & { total: number };
    throughput: Histogram & { total: number };
    statusCodeStats: Record<string, { count: number }>;
  }
  interface Request {
    method?: string;
    path?: string;
    body?: string | Buffer;
    headers?: Record<string, string>;
    /** Rewrites the request each time it is sent. */
    setupRequest?: (request: Request) => Request;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    /** Requests per second over all connections. */
    overallRate?: number;
    timeout?: number;
    pipelining?: number;
    headers?: Record<string, string>;
    requests?: Request[];
  }
  /** A running load: its events as it goes, its result when it ends. */
  interface Instance extends PromiseLike<Result> {
    /** Each answer as it arrives; `responseTime` (ms) runs from when the request was written. */
    on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void): this;
  }
  function autocannon(options: autocannon.Options): Instance;
  namespace autocannon {
    export type { Result, Options, Request, Histogram, Instance };
  }
  export = autocannon;
}
