// JSON text written straight into buffers and sent a chunk at a time, for answers too large
// to build as objects and stringify: a daily read of every worker is 240,000 day objects and
// 15 MB of text, and building the objects, JSON.stringify and encoding the string to UTF-8
// took three times what writing the bytes takes; sent as they fill, the first chunks cross
// to the client while the rest are written. What it writes is what JSON.stringify would.

const CHUNK_BYTES = 1 << 20;
// Copying short pieces byte by byte beats Buffer#set's call for them.
const SHORT_COPY = 32;

/** A number as JSON.stringify writes it: null for what is not finite. */
export function jsonNumber(value: number | null): string {
  return value !== null && Number.isFinite(value) ? String(value) : 'null';
}

/** Text that is already JSON, or a part of it (punctuation, keys, a stringified constant), encoded once. */
export function jsonPiece(text: string): Uint8Array {
  return Buffer.from(text, 'utf8');
}

export class JsonBytes {
  private buf = Buffer.allocUnsafe(CHUNK_BYTES);
  private pos = 0;
  private sent = 0;

  /** `send` takes each chunk once it is full, and the last one from `end`; a chunk sent is never written again. */
  constructor(private readonly send: (chunk: Buffer) => void) {}

  /** How many bytes were written: where the next goes. */
  get length(): number {
    return this.sent + this.pos;
  }

  /** Room for `bytes` more at `pos`; a full chunk is sent and a new one begun. */
  private room(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    this.flush();
    this.buf = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, bytes));
  }

  private flush(): void {
    if (this.pos === 0) return;
    this.send(this.buf.subarray(0, this.pos));
    this.sent += this.pos;
    this.buf = this.buf.subarray(this.pos);
    this.pos = 0;
  }

  piece(bytes: Uint8Array): void {
    this.room(bytes.length);
    if (bytes.length > SHORT_COPY) {
      this.buf.set(bytes, this.pos);
      this.pos += bytes.length;
      return;
    }
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < bytes.length; i++) buf[p++] = bytes[i] as number;
    this.pos = p;
  }

  /**
   * Text that is all ASCII (numbers, keys, days: the cells of a series), written as it is. One
   * string a series, built by concatenation, takes half the time of writing each of its cells'
   * pieces and numbers here one by one.
   */
  ascii(text: string): void {
    this.room(text.length);
    this.pos += this.buf.write(text, this.pos, 'latin1');
  }

  /** Any JSON value, through JSON.stringify. */
  value(value: object | string | boolean | null): void {
    const text = JSON.stringify(value);
    this.room(Buffer.byteLength(text));
    this.pos += this.buf.write(text, this.pos, 'utf8');
  }

  /** Sends what is written and not yet sent (more may be written after). */
  end(): void {
    this.flush();
  }
}

/**
 * JSON written ahead, kept to be copied into an answer later by range: from `out.length`
 * before the piece to `out.length` after it.
 */
export class WrittenAhead {
  private readonly chunks: Buffer[] = [];
  private readonly starts: number[] = [];
  private kept = 0;
  readonly out = new JsonBytes((chunk) => {
    this.chunks.push(chunk);
    this.starts.push(this.kept);
    this.kept += chunk.length;
  });

  /** Copies what was written from `start` up to `end` into `into`. */
  copy(into: JsonBytes, start: number, end: number): void {
    this.out.end();
    let c = this.chunkAt(start);
    for (let at = start; at < end; c++) {
      const chunk = this.chunks[c];
      const from = at - this.starts[c];
      const to = Math.min(chunk.length, end - this.starts[c]);
      into.piece(chunk.subarray(from, to));
      at += to - from;
    }
  }

  /** The chunk that holds byte `at`. */
  private chunkAt(at: number): number {
    let [low, high] = [0, this.starts.length - 1];
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.starts[middle] <= at) low = middle;
      else high = middle - 1;
    }
    return low;
  }
}
