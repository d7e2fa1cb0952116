import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pathOfUrl } from '../src/doors/http/app.js';

// The app reads a request's path by slicing its URL instead of parsing it (per-request cost);
// the slice must be exactly what the WHATWG parser gives, for any target a client can send.
describe('pathOfUrl', () => {
  const target = fc.string({
    unit: fc.constantFrom(...'/aZ09.-_~%?#&=:@!$()*+,;[]\'" <>\\^`{|}é'.split('')),
    maxLength: 40,
  });

  it('equals new URL(url).pathname for serialised request URLs', () => {
    fc.assert(
      fc.property(
        target,
        fc.constantFrom('http://127.0.0.1:8080', 'https://api.example', 'http://[::1]:3000'),
        (t, base) => {
          let href: string;
          try {
            href = new URL(`/${t}`, base).href;
          } catch {
            return;
          }
          expect(pathOfUrl(href)).toBe(new URL(href).pathname);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('equals new URL(url).pathname for the plain targets node-server passes through unparsed', () => {
    const plain = fc.string({
      unit: fc.constantFrom(..."/aZ09-_~?#&=:@!$()*+,;[]'".split('')),
      maxLength: 40,
    });
    fc.assert(
      fc.property(plain, (t) => {
        const url = `http://127.0.0.1:8080/${t}`;
        if (/\/\.\.?(?:[/?#]|$)/.test(`/${t}`)) return;
        expect(pathOfUrl(url)).toBe(new URL(url).pathname);
      }),
      { numRuns: 2000 },
    );
    expect(pathOfUrl('http://h/v1/pricing?x=/y#z')).toBe('/v1/pricing');
    expect(pathOfUrl('http://h')).toBe('/');
  });
});
