// keccak256 for the hot paths (the intentHash, item and JSON hashes of every preflight). viem's
// keccak256 (@noble/hashes) costs ~10 µs per short input here, js-sha3's ~3 µs; both are the
// original Keccak padding of Ethereum, not NIST SHA3-256 (which node:crypto has). Tests compare
// the two on random inputs. A string is hashed as the UTF-8 TextEncoder (viem's stringToBytes)
// produces, lone surrogates as U+FFFD, never js-sha3's own string encoding. No Buffer: the agent
// SDK runs this in browsers too.
import { keccak256 as keccak } from 'js-sha3';
import type { Hex } from 'viem';

// Node's Buffer encodes short strings faster than TextEncoder; a browser has only TextEncoder.
// Both give the same UTF-8 (lone surrogates as U+FFFD); the SDK's tests hash without Buffer too.
// Declared here, not taken from Node's types, so the SDK's browser build compiles this file too.
declare const Buffer: { from(text: string, encoding: 'utf8'): Uint8Array } | undefined;
const NODE_BUFFER = typeof Buffer === 'undefined' ? undefined : Buffer;
const UTF8 = new TextEncoder();
const utf8: (text: string) => Uint8Array =
  NODE_BUFFER === undefined
    ? (text) => UTF8.encode(text)
    : (text) => NODE_BUFFER.from(text, 'utf8');

/** keccak256 of bytes, or of a string's UTF-8, as 32 bytes. */
export function keccak256Bytes(data: Uint8Array | string): Uint8Array {
  return new Uint8Array(keccak.arrayBuffer(typeof data === 'string' ? utf8(data) : data));
}

/** keccak256 of bytes, or of a string's UTF-8, as 0x-prefixed lowercase hex. */
export function keccak256Hex(data: Uint8Array | string): Hex {
  return `0x${keccak.hex(typeof data === 'string' ? utf8(data) : data)}`;
}
