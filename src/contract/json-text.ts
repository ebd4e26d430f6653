// An event's metadata is serialized to be measured (x-max-serialized-bytes) and again to be stored:
// remembering the text of each object serialized makes that once.
const texts = new WeakMap<object, string>();

/** JSON.stringify(value), remembered for as long as the object lives: a caller must not change an object once serialized. */
export function jsonText(value: object): string {
  let text = texts.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    texts.set(value, text);
  }
  return text;
}
