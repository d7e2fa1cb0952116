/**
 * A tiny, strict XML reader for the badge tests: elements, attributes, character data and the five
 * predefined entities plus numeric references. It throws on anything not well-formed (unbalanced or
 * mismatched tags, a raw `<` or `&` in text or attributes, duplicate attributes, trailing content).
 * Comments, CDATA, DOCTYPE and processing instructions (other than a leading XML declaration) are
 * refused: the badge uses none of them.
 */
export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
}
export type XmlNode = XmlElement | string;

const NAME_RE = /[A-Za-z_][A-Za-z0-9_.:-]*/y;
const ENTITY_RE = /&(?:(amp|lt|gt|quot|apos)|#([0-9]+)|#x([0-9a-fA-F]+));/y;
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

export class XmlError extends Error {
  override name = 'XmlError';
}

export function parseXml(src: string): XmlElement {
  let i = 0;
  const fail = (why: string): never => {
    throw new XmlError(`${why} at offset ${i}: ${JSON.stringify(src.slice(i, i + 40))}`);
  };
  const ws = () => {
    while (i < src.length && /\s/.test(src[i]!)) i++;
  };
  const name = (): string => {
    NAME_RE.lastIndex = i;
    const m = NAME_RE.exec(src);
    if (!m) return fail('expected a name');
    i += m[0].length;
    return m[0];
  };
  /** Reads character data up to `stop` (exclusive), decoding references; raw `<` is an error. */
  const chars = (stop: string): string => {
    let out = '';
    while (i < src.length && !src.startsWith(stop, i)) {
      const ch = src[i]!;
      if (ch === '<') return out;
      if (ch === '&') {
        ENTITY_RE.lastIndex = i;
        const m = ENTITY_RE.exec(src);
        if (!m) return fail('bare & or unknown entity');
        out += m[1] ? NAMED[m[1]]! : String.fromCodePoint(Number.parseInt(m[2] ?? m[3]!, m[2] ? 10 : 16));
        i += m[0].length;
        continue;
      }
      out += ch;
      i++;
    }
    return out;
  };
  const element = (): XmlElement => {
    if (src[i] !== '<') fail('expected <');
    i++;
    const tag = name();
    const attrs: Record<string, string> = {};
    for (;;) {
      const before = i;
      ws();
      if (src.startsWith('/>', i)) {
        i += 2;
        return { name: tag, attrs, children: [] };
      }
      if (src[i] === '>') {
        i++;
        break;
      }
      if (i === before) fail('expected whitespace before an attribute');
      const an = name();
      if (Object.hasOwn(attrs, an)) fail(`duplicate attribute ${an}`);
      ws();
      if (src[i] !== '=') fail('expected =');
      i++;
      ws();
      const q = src[i];
      if (q !== '"' && q !== "'") return fail('expected a quoted value');
      i++;
      const v = chars(q);
      if (src[i] !== q) fail('unterminated attribute value');
      i++;
      attrs[an] = v;
    }
    const children: XmlNode[] = [];
    for (;;) {
      if (i >= src.length) fail(`unclosed <${tag}>`);
      if (src.startsWith('</', i)) {
        i += 2;
        const end = name();
        if (end !== tag) fail(`</${end}> closes <${tag}>`);
        ws();
        if (src[i] !== '>') fail('expected >');
        i++;
        return { name: tag, attrs, children };
      }
      if (src.startsWith('<!', i) || src.startsWith('<?', i))
        fail('comments, CDATA, DOCTYPE and PIs are not expected');
      if (src[i] === '<') children.push(element());
      else {
        const text = chars('<');
        if (text) children.push(text);
      }
    }
  };
  if (src.startsWith('<?xml', i)) {
    const end = src.indexOf('?>', i);
    if (end < 0) fail('unterminated XML declaration');
    i = end + 2;
  }
  ws();
  const root = element();
  ws();
  if (i !== src.length) fail('content after the root element');
  return root;
}

/** Every element named `name` in document order (the root included). */
export function findAll(el: XmlElement, name: string): XmlElement[] {
  const out: XmlElement[] = [];
  const walk = (e: XmlElement) => {
    if (e.name === name) out.push(e);
    for (const c of e.children) if (typeof c !== 'string') walk(c);
  };
  walk(el);
  return out;
}

/** The concatenated character data under `el`. */
export function textOf(el: XmlElement): string {
  return el.children.map((c) => (typeof c === 'string' ? c : textOf(c))).join('');
}

/** The ancestors of `target` under `root`, outermost first (empty for the root or an element not found). */
export function ancestorsOf(root: XmlElement, target: XmlElement): XmlElement[] {
  const path: XmlElement[] = [];
  const walk = (e: XmlElement): boolean => {
    if (e === target) return true;
    for (const c of e.children) {
      if (typeof c === 'string') continue;
      path.push(e);
      if (walk(c)) return true;
      path.pop();
    }
    return false;
  };
  walk(root);
  return path;
}
