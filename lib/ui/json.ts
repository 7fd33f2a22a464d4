/**
 * A JSON parser for display that keeps every number exactly as written (JSON.parse turns
 * 9007199254740993 into …992): payloads are shown from the database's own text.
 */
export type JsonNode =
  | { kind: 'object'; entries: [string, JsonNode][] }
  | { kind: 'array'; items: JsonNode[] }
  | { kind: 'string'; value: string }
  | { kind: 'number'; raw: string }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'null' };

export function parseJson(text: string): JsonNode {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at ${i}`);
  };
  const str = (): string => {
    const start = i;
    i++; // opening quote
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (depth: number): JsonNode => {
    if (depth > 200) fail('too deep');
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const entries: [string, JsonNode][] = [];
      ws();
      if (text[i] === '}') {
        i++;
        return { kind: 'object', entries };
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a key');
        const k = str();
        ws();
        if (text[i++] !== ':') fail('expected :');
        entries.push([k, value(depth + 1)]);
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') {
          i++;
          return { kind: 'object', entries };
        } else fail('expected , or }');
      }
    }
    if (c === '[') {
      i++;
      const items: JsonNode[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return { kind: 'array', items };
      }
      for (;;) {
        items.push(value(depth + 1));
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') {
          i++;
          return { kind: 'array', items };
        } else fail('expected , or ]');
      }
    }
    if (c === '"') return { kind: 'string', value: str() };
    if (text.startsWith('true', i)) return (i += 4), { kind: 'boolean', value: true };
    if (text.startsWith('false', i)) return (i += 5), { kind: 'boolean', value: false };
    if (text.startsWith('null', i)) return (i += 4), { kind: 'null' };
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) fail('unexpected character');
    i += m![0].length;
    return { kind: 'number', raw: m![0] };
  };
  const v = value(0);
  ws();
  if (i !== text.length) fail('trailing text');
  return v;
}

/** Pretty JSON text from a node (numbers as written). */
export function printJson(n: JsonNode, indent = 0): string {
  const pad = '  '.repeat(indent + 1);
  const end = '  '.repeat(indent);
  switch (n.kind) {
    case 'object':
      if (!n.entries.length) return '{}';
      return `{\n${n.entries.map(([k, v]) => `${pad}${JSON.stringify(k)}: ${printJson(v, indent + 1)}`).join(',\n')}\n${end}}`;
    case 'array':
      if (!n.items.length) return '[]';
      return `[\n${n.items.map((v) => `${pad}${printJson(v, indent + 1)}`).join(',\n')}\n${end}]`;
    case 'string':
      return JSON.stringify(n.value);
    case 'number':
      return n.raw;
    case 'boolean':
      return String(n.value);
    case 'null':
      return 'null';
  }
}
