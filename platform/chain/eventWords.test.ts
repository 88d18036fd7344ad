// The word-by-word event decoder against viem's decodeEventLog, on random logs of the three events
// the payment paths read, and on logs that are not those events.
import fc from 'fast-check';
import {
  type AbiEvent,
  bytesToHex,
  decodeEventLog,
  encodeAbiParameters,
  encodeEventTopics,
  type Hex,
} from 'viem';
import { eip3009TokenAbi, groupSettlementAbi } from '../../contracts/artifacts/abis';
import { abiEvent, eventWordsDecoder, type RawLog } from './eventWords';

const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((bytes) => bytesToHex(bytes));
const word = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => bytesToHex(bytes));
const bytes4 = fc.uint8Array({ minLength: 4, maxLength: 4 }).map((bytes) => bytesToHex(bytes));
const uint256 = fc.bigInt({ min: 0n, max: 2n ** 256n - 1n });

const TRANSFER = abiEvent(eip3009TokenAbi, 'Transfer');
const USED = abiEvent(eip3009TokenAbi, 'AuthorizationUsed');
const SETTLED = abiEvent(groupSettlementAbi, 'AuthorizationSettled');

/** A log of `event` with `args`, encoded by viem. */
function logOf(event: AbiEvent, args: Record<string, unknown>): RawLog {
  const topics = encodeEventTopics({ abi: [event], eventName: event.name, args } as never);
  const unindexed = event.inputs.filter((input) => !input.indexed);
  const data =
    unindexed.length === 0
      ? '0x'
      : encodeAbiParameters(
          unindexed,
          unindexed.map((input) => args[input.name!]),
        );
  return { topics: topics as Hex[], data };
}

/** viem's reading of the log, addresses and hex in lower case (as the decoder answers). */
function viemReading(event: AbiEvent, log: RawLog): Record<string, unknown> {
  const decoded = decodeEventLog({
    abi: [event],
    topics: log.topics as [Hex, ...Hex[]],
    data: log.data,
  });
  return Object.fromEntries(
    Object.entries(decoded.args as Record<string, unknown>).map(([key, value]) => [
      key,
      typeof value === 'string' ? value.toLowerCase() : value,
    ]),
  );
}

const cases = [
  {
    event: TRANSFER,
    args: fc.record({ from: address, to: address, value: uint256 }),
  },
  { event: USED, args: fc.record({ authorizer: address, nonce: word }) },
  {
    event: SETTLED,
    args: fc.record({
      token: address,
      authorizer: address,
      nonce: word,
      settled: fc.boolean(),
      reason: bytes4,
    }),
  },
];

test.each(cases)('decodes $event.name as viem does, on random fields', ({ event, args }) => {
  const decode = eventWordsDecoder(event);
  fc.assert(
    fc.property(args, (fields) => {
      const log = logOf(event, fields);
      expect(decode(log)).toEqual(viemReading(event, log));
    }),
    { numRuns: 300 },
  );
});

test('a log of another event, or of another shape, is not the event', () => {
  const decodeTransfer = eventWordsDecoder(TRANSFER);
  const decodeSettled = eventWordsDecoder(SETTLED);
  const from = `0x${'11'.repeat(20)}` as Hex;
  const to = `0x${'22'.repeat(20)}` as Hex;
  const transfer = logOf(TRANSFER, { from, to, value: 5n });
  const used = logOf(USED, { authorizer: from, nonce: `0x${'33'.repeat(32)}` });
  expect(decodeTransfer(transfer)).toEqual({ from, to, value: 5n });
  expect(decodeTransfer(used)).toBeNull();
  // One topic too few or too many (an ERC-721 Transfer indexes its third field).
  expect(decodeTransfer({ ...transfer, topics: transfer.topics.slice(0, 2) })).toBeNull();
  expect(
    decodeTransfer({ topics: [...transfer.topics, `0x${'00'.repeat(31)}05`], data: '0x' }),
  ).toBeNull();
  // Data of another length.
  expect(decodeTransfer({ ...transfer, data: `${transfer.data}00` })).toBeNull();
  expect(decodeTransfer({ ...transfer, data: '0x' })).toBeNull();
  // A bool word that is neither 0 nor 1.
  const settled = logOf(SETTLED, {
    token: from,
    authorizer: to,
    nonce: `0x${'44'.repeat(32)}`,
    settled: true,
    reason: '0x00000000',
  });
  const badBool = `0x${'00'.repeat(31)}02${settled.data.slice(66)}` as Hex;
  expect(decodeSettled({ ...settled, data: badBool })).toBeNull();
  expect(decodeSettled(settled)).toMatchObject({ settled: true, reason: '0x00000000' });
});

test('refuses, when built, an event with a field wider than one word', () => {
  const withString: AbiEvent = {
    type: 'event',
    name: 'Memo',
    inputs: [{ name: 'text', type: 'string', indexed: false }],
  };
  expect(() => eventWordsDecoder(withString)).toThrow(
    'eventWords decodes one-word fields only, not string (text)',
  );
  expect(() => abiEvent(eip3009TokenAbi, 'NoSuchEvent')).toThrow('no event NoSuchEvent');
});
