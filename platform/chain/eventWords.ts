// Decoders for the events the payment paths read from every receipt (the token's Transfer and
// AuthorizationUsed, the GroupSettlement contract's AuthorizationSettled). Each of their fields is
// one ABI word (address, bool, uintN, bytesN), so a log decodes by slicing: the selector is
// computed once per event rather than for every ABI entry on every log (viem's parseEventLogs, about
// 77 µs of the service thread per member of a group receipt), and addresses come out in lower
// case, unchecksummed, which is how every caller compares them. A log that is not the event, or
// does not have its shape, decodes to null (as parseEventLogs skips it); decodeEventLog holds
// the answers to viem's own in eventWords.test.ts.
import {
  type Abi,
  type AbiEvent,
  type AbiParameter,
  getAbiItem,
  type Hex,
  toEventSelector,
} from 'viem';

/** What a log must carry to be decoded. */
export interface RawLog {
  readonly topics: readonly Hex[];
  readonly data: Hex;
}

export type WordValue = string | bigint | boolean;

type WordReader = (word: string) => WordValue | null;

const WORD_HEX = 64;

function readerOf(parameter: AbiParameter): WordReader {
  const type = parameter.type;
  if (type === 'address') return (word) => `0x${word.slice(24)}`.toLowerCase();
  if (type === 'bool') {
    return (word) => {
      if (/^0{64}$/.test(word)) return false;
      if (/^0{63}1$/.test(word)) return true;
      return null; // not a valid ABI bool: not this event
    };
  }
  const uint = /^uint(\d+)$/.exec(type);
  if (uint) {
    const bits = Number(uint[1]);
    return (word) => {
      const value = BigInt(`0x${word}`);
      return value >> BigInt(bits) === 0n ? value : null;
    };
  }
  const bytes = /^bytes(\d+)$/.exec(type);
  if (bytes && Number(bytes[1]) >= 1 && Number(bytes[1]) <= 32) {
    const size = Number(bytes[1]) * 2;
    return (word) => `0x${word.slice(0, size)}`.toLowerCase();
  }
  throw new TypeError(`eventWords decodes one-word fields only, not ${type} (${parameter.name})`);
}

/**
 * A decoder for `event`: the log's fields by name, or null when the log is another event, has too
 * few or too many topics, or data of another length.
 */
export function eventWordsDecoder(
  event: AbiEvent,
): (log: RawLog) => Record<string, WordValue> | null {
  const selector = toEventSelector(event).toLowerCase();
  const indexed = event.inputs.filter((input) => input.indexed);
  const unindexed = event.inputs.filter((input) => !input.indexed);
  const indexedReaders = indexed.map(readerOf);
  const dataReaders = unindexed.map(readerOf);
  const dataLength = 2 + WORD_HEX * unindexed.length;
  return (log) => {
    const { topics, data } = log;
    if (topics.length !== indexed.length + 1 || topics[0]?.toLowerCase() !== selector) return null;
    if (data.length !== dataLength) return null;
    const fields: Record<string, WordValue> = {};
    for (let index = 0; index < indexed.length; index += 1) {
      const topic = topics[index + 1]!;
      if (topic.length !== 2 + WORD_HEX) return null;
      const value = indexedReaders[index]!(topic.slice(2));
      if (value === null) return null;
      fields[indexed[index]!.name!] = value;
    }
    for (let index = 0; index < unindexed.length; index += 1) {
      const start = 2 + WORD_HEX * index;
      const value = dataReaders[index]!(data.slice(start, start + WORD_HEX));
      if (value === null) return null;
      fields[unindexed[index]!.name!] = value;
    }
    return fields;
  };
}

/** The event named `name` in `abi` (viem's lookup; an ABI without it is a programming error). */
export function abiEvent(abi: readonly unknown[], name: string): AbiEvent {
  const found = getAbiItem({ abi: abi as Abi, name }) as AbiEvent | undefined;
  if (found?.type !== 'event') throw new TypeError(`no event ${name} in the ABI`);
  return found;
}
