/**
 * The Borsh reader the Solana program's event layouts are read with (the IDL's types: fixed
 * arrays, little-endian integers, bool, pubkey, length-prefixed bytes and strings, Option). Every
 * read is bounds-checked; a value that does not fit its type throws. No I/O.
 */
import { getBase58Decoder } from '@solana/kit';
import { sanitizeText } from '../scanner.js';

class BorshError extends Error {}

const base58 = getBase58Decoder();
const utf8Lenient = new TextDecoder('utf-8', { fatal: false });

/** Reads Borsh values from a byte buffer; every read is bounds-checked (BorshError). */
export class BorshReader {
  private pos = 0;
  private readonly view: DataView;

  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get remaining(): number {
    return this.bytes.length - this.pos;
  }

  private need(n: number): number {
    if (n < 0 || this.pos + n > this.bytes.length)
      throw new BorshError(`need ${n} bytes at offset ${this.pos}, have ${this.remaining}`);
    const at = this.pos;
    this.pos += n;
    return at;
  }

  fixed(n: number): Uint8Array {
    const at = this.need(n);
    return this.bytes.subarray(at, at + n);
  }
  u8(): number {
    return this.view.getUint8(this.need(1));
  }
  u16(): number {
    return this.view.getUint16(this.need(2), true);
  }
  u32(): number {
    return this.view.getUint32(this.need(4), true);
  }
  u64(): bigint {
    return this.view.getBigUint64(this.need(8), true);
  }
  i128(): bigint {
    const at = this.need(16);
    const lo = this.view.getBigUint64(at, true);
    const hi = this.view.getBigInt64(at + 8, true);
    return (hi << 64n) + lo;
  }
  bool(): boolean {
    const b = this.u8();
    if (b > 1) throw new BorshError(`invalid bool ${b}`);
    return b === 1;
  }
  pubkey(): string {
    return base58.decode(this.fixed(32));
  }
  bytesVec(): Uint8Array {
    return this.fixed(this.u32());
  }
  /** A Borsh string, read leniently (invalid UTF-8 → U+FFFD) and made storable. */
  string(): string {
    return sanitizeText(utf8Lenient.decode(this.bytesVec()));
  }
  option<T>(read: () => T): T | null {
    const tag = this.u8();
    if (tag === 0) return null;
    if (tag === 1) return read();
    throw new BorshError(`invalid option tag ${tag}`);
  }
  end(): void {
    if (this.remaining !== 0) throw new BorshError(`${this.remaining} trailing bytes`);
  }
}
