/**
 * The pure badge renderer (src/badge/svg.ts): geometry, colours, the value text of each case, XML
 * escaping of everything interpolated, and the accessible sentence. The SVG is read back with a
 * strict well-formedness parser (test/helpers/badge-xml.ts), never with regular expressions.
 */
import { describe, expect, it } from 'vitest';
import {
  BADGE_LABEL,
  badgeWidth,
  escapeXml,
  renderBadge,
  textWidth,
  type BadgeInput,
} from '../src/badge/svg.js';
import { displayScore } from '../src/scoring/index.js';
import { ancestorsOf, findAll, parseXml, textOf, XmlError, type XmlElement } from './helpers/badge-xml.js';

const DATE = '2026-11-20';
const base: BadgeInput = { scoreText: '86.65', raters: 3, date: DATE, burn: false };

/** The parts of a rendered badge a viewer sees. */
function read(svg: string) {
  const root = parseXml(svg);
  expect(root.name).toBe('svg');
  const hidden = (e: XmlElement) => ancestorsOf(root, e).some((a) => a.attrs['aria-hidden'] === 'true');
  const visibleTexts = findAll(root, 'text').filter((t) => !hidden(t));
  const rects = findAll(root, 'rect').filter((r) => !ancestorsOf(root, r).some((a) => a.name === 'clipPath'));
  const fillOf = (e: XmlElement) =>
    e.attrs.fill ?? [...ancestorsOf(root, e)].reverse().find((a) => a.attrs.fill !== undefined)?.attrs.fill;
  const titles = findAll(root, 'title');
  return {
    root,
    width: Number(root.attrs.width),
    height: Number(root.attrs.height),
    viewBox: root.attrs.viewBox,
    role: root.attrs.role,
    ariaLabel: root.attrs['aria-label'],
    title: titles.length === 1 ? textOf(titles[0]!) : null,
    label: visibleTexts[0] ? textOf(visibleTexts[0]) : null,
    value: visibleTexts[1] ? textOf(visibleTexts[1]) : null,
    textCount: visibleTexts.length,
    textFills: visibleTexts.map(fillOf),
    labelBox: rects[0]!,
    valueBox: rects[1]!,
  };
}

describe('badge geometry', () => {
  it('is always 20 px high, with a matching viewBox', () => {
    for (const input of [
      base,
      { ...base, scoreText: null },
      { ...base, burn: true },
      { ...base, scoreText: '0', raters: 1 },
      { ...base, date: null },
      { ...base, raters: 123456789 },
    ]) {
      const b = read(renderBadge(input));
      expect(b.height).toBe(20);
      expect(b.viewBox).toBe(`0 0 ${b.width} 20`);
      expect(b.labelBox.attrs.height).toBe('20');
      expect(b.valueBox.attrs.height).toBe('20');
    }
  });

  it('has a fixed 98 px label box and a value box that starts where it ends and fills the rest', () => {
    for (const input of [base, { ...base, scoreText: null }, { ...base, raters: 1 }]) {
      const b = read(renderBadge(input));
      expect(b.labelBox.attrs.width).toBe('98');
      expect(b.labelBox.attrs.x ?? '0').toBe('0');
      expect(b.valueBox.attrs.x).toBe('98');
      expect(98 + Number(b.valueBox.attrs.width)).toBe(b.width);
      expect(b.width).toBe(badgeWidth(input));
    }
  });

  it('grows with the value text, and only with it', () => {
    const inputs: BadgeInput[] = [
      { ...base, scoreText: '5', raters: 1 },
      { ...base, scoreText: '86.6', raters: 1 },
      { ...base, scoreText: '86.65', raters: 1 },
      { ...base, scoreText: '86.65', raters: 12 },
      { ...base, scoreText: '86.65', raters: 12345 },
      { ...base, scoreText: '86.65', raters: 12345, burn: true },
    ];
    const widths = inputs.map((i) => read(renderBadge(i)).width);
    for (let k = 1; k < widths.length; k++)
      expect(widths[k]!, JSON.stringify(inputs[k])).toBeGreaterThan(widths[k - 1]!);
    // Same text length in characters, different glyphs: the width table is per character.
    expect(textWidth('111')).toBe(21);
    expect(textWidth('iii')).toBeLessThan(textWidth('mmm'));
    expect(read(renderBadge({ ...base, date: 'iiiiiiiiii' })).width).toBeLessThan(
      read(renderBadge({ ...base, date: 'mmmmmmmmmm' })).width,
    );
  });

  it('measures with the per-character table (DejaVu Sans 11 px), an em for unknown characters, and pins it with textLength', () => {
    expect(textWidth('')).toBe(0);
    expect(textWidth('0')).toBe(7);
    expect(textWidth(' ')).toBe(3.5);
    expect(textWidth('\u00b7')).toBe(3.5);
    expect(textWidth('\u6f22')).toBe(11); // unknown: one em
    expect(textWidth('\u{1F600}')).toBe(11); // one code point, not two UTF-16 units
    const svg = renderBadge(base);
    const texts = findAll(parseXml(svg), 'text');
    for (const t of texts) expect(Number(t.attrs.textLength)).toBeCloseTo(textWidth(textOf(t)), 2);
    // The value box leaves padding around its text.
    const b = read(svg);
    expect(Number(b.valueBox.attrs.width)).toBeGreaterThan(textWidth(b.value!));
    expect(textWidth(BADGE_LABEL)).toBeLessThan(98);
  });

  it('is deterministic: the same input gives the same bytes', () => {
    expect(renderBadge({ ...base })).toBe(renderBadge({ ...base }));
  });
});

describe('badge text and colours', () => {
  const PURPLE = '#7c4dcc';
  const GREY = '#5a5a66';

  it('reads `<score> · <n> raters · <date>` on the value box colour, white text, label box #3a3a44', () => {
    const b = read(renderBadge(base));
    expect(b.label).toBe(BADGE_LABEL);
    expect(b.value).toBe(`86.65 \u00b7 3 raters \u00b7 ${DATE}`);
    expect(b.labelBox.attrs.fill).toBe('#3a3a44');
    expect(b.valueBox.attrs.fill).toBe(PURPLE);
    expect(b.textCount).toBe(2);
    expect(b.textFills).toEqual(['#ffffff', '#ffffff']);
  });

  it('says `1 rater` in the singular', () => {
    expect(read(renderBadge({ ...base, raters: 1 })).value).toBe(`86.65 \u00b7 1 rater \u00b7 ${DATE}`);
    expect(read(renderBadge({ ...base, raters: 11 })).value).toBe(`86.65 \u00b7 11 raters \u00b7 ${DATE}`);
  });

  it('shows the score in the display convention it is given (two decimals, trailing zeros trimmed)', () => {
    for (const [x, shown] of [
      [86.653045, '86.65'],
      [84.7, '84.7'],
      [87, '87'],
      [82.0, '82'],
    ] as const) {
      expect(displayScore(x)).toBe(shown);
      expect(read(renderBadge({ ...base, scoreText: displayScore(x) })).value).toBe(
        `${shown} \u00b7 3 raters \u00b7 ${DATE}`,
      );
    }
  });

  it('a real zero renders `0 · <n> raters`, never the no-ratings text, on the normal colour', () => {
    const b = read(renderBadge({ ...base, scoreText: displayScore(0), raters: 2 }));
    expect(b.value).toBe(`0 \u00b7 2 raters \u00b7 ${DATE}`);
    expect(b.value).not.toContain('sin calificaciones');
    expect(b.valueBox.attrs.fill).toBe(PURPLE);
  });

  it('burn address: `<score> · burn address · <n> raters · <date>` on grey', () => {
    const b = read(renderBadge({ ...base, burn: true }));
    expect(b.value).toBe(`86.65 \u00b7 burn address \u00b7 3 raters \u00b7 ${DATE}`);
    expect(b.valueBox.attrs.fill).toBe(GREY);
    expect(b.labelBox.attrs.fill).toBe('#3a3a44');
    expect(b.textFills).toEqual(['#ffffff', '#ffffff']);
  });

  it('no ratings: `sin calificaciones · <date>` on grey, whatever the rater count or burn flag', () => {
    const a = renderBadge({ scoreText: null, raters: 0, date: DATE, burn: false });
    const b = read(a);
    expect(b.value).toBe(`sin calificaciones \u00b7 ${DATE}`);
    expect(b.valueBox.attrs.fill).toBe(GREY);
    expect(renderBadge({ scoreText: null, raters: 5, date: DATE, burn: false })).toBe(a);
    expect(read(renderBadge({ scoreText: null, raters: 0, date: DATE, burn: true })).value).toBe(
      `sin calificaciones \u00b7 ${DATE}`,
    );
  });

  it('never refreshed: the date slot reads `sin indexar`', () => {
    expect(read(renderBadge({ scoreText: null, raters: 0, date: null, burn: false })).value).toBe(
      'sin calificaciones \u00b7 sin indexar',
    );
    expect(read(renderBadge({ ...base, date: null })).value).toBe('86.65 \u00b7 3 raters \u00b7 sin indexar');
  });

  it('role="img", and the <title> and aria-label carry the same sentence (label and value text)', () => {
    for (const input of [
      base,
      { ...base, burn: true },
      { ...base, scoreText: null },
      { ...base, raters: 1 },
    ]) {
      const b = read(renderBadge(input));
      expect(b.role).toBe('img');
      expect(b.title).toBe(`${b.label}: ${b.value}`);
      expect(b.ariaLabel).toBe(b.title);
    }
  });

  it('carries no policy version, concentration, self-rating gap or campaign signal', () => {
    for (const input of [base, { ...base, burn: true }, { ...base, scoreText: null }]) {
      const svg = renderBadge(input).toLowerCase();
      for (const word of ['policy', 'concentration', 'gap', 'self', 'campaign', 'top_client', 'confidence']) {
        expect(svg, word).not.toContain(word);
      }
    }
  });
});

describe('XML safety', () => {
  const HOSTILE = `<script>alert(1)</script> "double" & 'single' <img src=x onerror=alert(2)> ]]> &amp;`;

  it('escapes the five XML specials', () => {
    expect(escapeXml(`<a href="x">&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;');
  });

  it('every interpolated string is escaped: the document stays well-formed and reads back verbatim', () => {
    const input: BadgeInput = { scoreText: HOSTILE, raters: 2, date: HOSTILE, burn: true };
    const svg = renderBadge(input);
    expect(svg).not.toContain('<script');
    expect(svg).not.toContain('<img');
    const b = read(svg);
    expect(b.value).toBe(`${HOSTILE} \u00b7 burn address \u00b7 2 raters \u00b7 ${HOSTILE}`);
    expect(b.title).toBe(`${BADGE_LABEL}: ${b.value}`);
    expect(b.ariaLabel).toBe(b.title);
    expect(findAll(b.root, 'script')).toEqual([]);
    expect(findAll(b.root, 'img')).toEqual([]);
    // No-ratings path too.
    expect(read(renderBadge({ ...input, scoreText: null })).value).toBe(
      `sin calificaciones \u00b7 ${HOSTILE}`,
    );
  });

  it('the reader used here really rejects malformed XML', () => {
    for (const bad of [
      '<svg>',
      '<svg><a></svg>',
      '<svg a="<"/>',
      '<svg>&</svg>',
      '<svg a="1" a="2"/>',
      '<svg/><x/>',
      '<svg>&bogus;</svg>',
    ]) {
      expect(() => parseXml(bad), bad).toThrow(XmlError);
    }
    expect(parseXml('<svg a="&lt;&#65;&#x42;"><t>x &amp; y</t></svg>').attrs.a).toBe('<AB');
  });

  it('every rendered case parses as XML with an SVG root in the SVG namespace', () => {
    for (const input of [
      base,
      { ...base, burn: true },
      { ...base, scoreText: null, date: null },
      { ...base, scoreText: '0', raters: 1 },
    ]) {
      const root = parseXml(renderBadge(input));
      expect(root.attrs.xmlns).toBe('http://www.w3.org/2000/svg');
    }
  });
});
