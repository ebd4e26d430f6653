import fc from 'fast-check';

/**
 * A fragment written into the JSON text verbatim: what JSON.stringify cannot
 * write (1e400, -0, invalid UTF-8, 100,000 nested brackets) or should not be
 * printed in a counterexample (a 1 MB string). `label` stands for it there.
 */
export class Raw {
  constructor(
    readonly bytes: Buffer,
    readonly label: string,
  ) {}

  static text(text: string, label = text): Raw {
    return new Raw(Buffer.from(text, 'utf8'), label);
  }

  [fc.toStringMethod](): string {
    return `raw(${this.label})`;
  }
}

/** An object written as its entries in order, so that a key may repeat and "__proto__" is an ordinary key. */
export class Entries {
  constructor(readonly entries: Array<[string, unknown]>) {}

  [fc.toStringMethod](): string {
    return `entries(${this.entries.map(([key, value]) => `${JSON.stringify(key)}: ${fc.stringify(value)}`).join(', ')})`;
  }
}

/** The JSON text of a value that may hold Raw fragments and Entries objects. */
export function encodeJson(value: unknown): Buffer {
  const parts: Buffer[] = [];
  let text = '';
  const flush = () => {
    if (text) parts.push(Buffer.from(text, 'utf8'));
    text = '';
  };
  const write = (node: unknown): void => {
    if (node instanceof Raw) {
      flush();
      parts.push(node.bytes);
    } else if (node instanceof Entries) {
      writeObject(node.entries);
    } else if (Array.isArray(node)) {
      text += '[';
      node.forEach((item, i) => {
        if (i > 0) text += ',';
        write(item);
      });
      text += ']';
    } else if (node !== null && typeof node === 'object') {
      writeObject(Object.entries(node));
    } else {
      text += JSON.stringify(node) ?? 'null';
    }
  };
  const writeObject = (entries: Array<[string, unknown]>) => {
    text += '{';
    entries.forEach(([key, item], i) => {
      text += `${i > 0 ? ',' : ''}${JSON.stringify(key)}:`;
      write(item);
    });
    text += '}';
  };
  write(value);
  flush();
  return Buffer.concat(parts);
}
