// ReceiptAnchor on a real anvil (Cancun) with the committed artifact, through platform/chain's
// helpers: writers anchor contiguous batches once each, everyone else is refused, the writer set
// changes only after the immutable delay (time travelled with anvil), and a batch's proofs check
// against the contract with nothing but viem.
import {
  type Address,
  type BaseError,
  type Hex,
  bytesToHex,
  concat,
  decodeErrorResult,
  encodeDeployData,
  keccak256,
  numberToHex,
  parseEther,
  parseEventLogs,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  buildMerkleTree,
  proofToHex,
  receiptLeafData,
  receiptMerkleHash,
} from '../core/canon/merkle';
import { type AnvilNode, startAnvil } from '../platform/chain/anvil';
import {
  type AnvilTestClient,
  type ChainPublicClient,
  createAnvilTestClient,
  createChainPublicClient,
  createChainWalletClient,
} from '../platform/chain/clients';
import {
  MAINNET_WRITER_DELAY_SECONDS,
  type ReceiptAnchorConfig,
  anchorBatch,
  cancelWriterProposal,
  deployReceiptAnchor,
  executeWriter,
  mainnetReceiptAnchorConfig,
  proposeWriter,
  readAnchoredEvent,
  readBatch,
  readWriterState,
} from '../platform/chain/receiptAnchor';
import { revertErrorName } from '../platform/chain/tokens';
import { receiptAnchorAbi, receiptAnchorBytecode } from './artifacts/abis';

/** An hour: wall-clock seconds spent by the test cannot reach it, only anvil time travel does. */
const TEST_DELAY_SECONDS = 3_600;
const ROOT_A = `0x${'a1'.repeat(32)}` as Hex;
const ROOT_B = `0x${'b2'.repeat(32)}` as Hex;
const ROOT_C = `0x${'c3'.repeat(32)}` as Hex;
/** The target: ≤ 100 gas per receipt at batches of 1,000, i.e. one anchor call ≤ 100,000. */
const MAX_ANCHOR_GAS = 100_000n;

type TestAccount = ReturnType<typeof privateKeyToAccount>;

let node: AnvilNode;
let publicClient: ChainPublicClient;
let testClient: AnvilTestClient;
const admin = privateKeyToAccount(generatePrivateKey());
const writer = privateKeyToAccount(generatePrivateKey());
const newWriter = privateKeyToAccount(generatePrivateKey());
const stranger = privateKeyToAccount(generatePrivateKey());

const walletOf = (account: TestAccount) =>
  createChainWalletClient(node, account, { pollingIntervalMs: 20 });

async function deploy(config: ReceiptAnchorConfig): Promise<Address> {
  return (await deployReceiptAnchor(publicClient, walletOf(admin), config)).address;
}

function read<const F extends 'nextSeq' | 'WRITER_DELAY' | 'ADMIN' | 'MAX_WRITER_DELAY'>(
  contract: Address,
  functionName: F,
) {
  return publicClient.readContract({ address: contract, abi: receiptAnchorAbi, functionName });
}

/** The custom error a call reverts with; the helpers simulate before sending, so this is it. */
async function refusal(action: Promise<unknown>): Promise<string> {
  try {
    await action;
  } catch (error) {
    const name = revertErrorName(error);
    if (name !== null) return name;
    throw error;
  }
  throw new Error('the call was not refused');
}

async function constructorRefusal(
  args: readonly [bigint, Address, readonly Address[]],
): Promise<string> {
  const data = encodeDeployData({
    abi: receiptAnchorAbi,
    bytecode: receiptAnchorBytecode,
    args: [args[0], args[1], [...args[2]]],
  });
  try {
    await publicClient.call({ account: admin, data });
  } catch (error) {
    const reverted = (error as BaseError).walk(
      (cause) => typeof (cause as { data?: unknown }).data === 'string',
    ) as { data: Hex } | null;
    if (reverted)
      return decodeErrorResult({ abi: receiptAnchorAbi, data: reverted.data }).errorName;
    throw error;
  }
  throw new Error('the constructor did not revert');
}

/** Moves the chain's clock so that the latest block (where calls run) has exactly this timestamp. */
async function travelTo(timestampUnixS: bigint): Promise<void> {
  await testClient.setNextBlockTimestamp({ timestamp: timestampUnixS });
  await testClient.mine({ blocks: 1 });
}

const anchorAs = (
  account: TestAccount,
  contract: Address,
  root: Hex,
  firstSeq: bigint,
  count: number,
) => anchorBatch({ publicClient, writer: walletOf(account), contract, root, firstSeq, count });

/** RFC 9162 §2.1.3.2 with viem only, as docs/receipts.md shows it: leaf, walk, compare. */
function viemOnlyRoot(
  leafData: Hex,
  index: number,
  treeSize: number,
  proof: readonly Hex[],
): Hex | null {
  let fn = index;
  let sn = treeSize - 1;
  let hash = keccak256(concat(['0x00', leafData]));
  for (const sibling of proof) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      hash = keccak256(concat(['0x01', sibling, hash]));
      while (fn % 2 === 0 && fn !== 0) [fn, sn] = [fn / 2, Math.floor(sn / 2)];
    } else {
      hash = keccak256(concat(['0x01', hash, sibling]));
    }
    [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
  }
  return sn === 0 ? hash : null;
}

beforeAll(async () => {
  node = await startAnvil({ chainId: 196 });
  publicClient = createChainPublicClient(node, { pollingIntervalMs: 20 });
  testClient = createAnvilTestClient(node);
  for (const account of [admin, writer, newWriter, stranger])
    await testClient.setBalance({ address: account.address, value: parseEther('10') });
});

afterAll(async () => {
  await node?.stop();
});

describe('ReceiptAnchor construction', () => {
  it('keeps the delay and the admin it was built with, and nothing in its ABI can change them', async () => {
    const contract = await deploy({
      delaySeconds: TEST_DELAY_SECONDS,
      admin: admin.address,
      writers: [writer.address],
    });
    expect(await read(contract, 'WRITER_DELAY')).toBe(BigInt(TEST_DELAY_SECONDS));
    expect(await read(contract, 'ADMIN')).toBe(admin.address);
    expect(await read(contract, 'nextSeq')).toBe(0n);
    expect(await readWriterState(publicClient, contract, writer.address)).toEqual({
      isWriter: true,
      pending: null,
    });
    const functions = receiptAnchorAbi.filter((item) => item.type === 'function') as ReadonlyArray<{
      name: string;
      stateMutability: string;
    }>;
    const stateChanging = functions
      .filter((item) => !['view', 'pure'].includes(item.stateMutability))
      .map((item) => item.name)
      .sort();
    expect(stateChanging).toEqual([
      'anchor',
      'cancelWriterProposal',
      'executeWriter',
      'proposeWriter',
    ]);
  });

  it('refuses a zero or over-long delay, the zero admin, a zero or repeated initial writer', async () => {
    const maxDelay = await read(
      await deploy({ delaySeconds: 1, admin: admin.address, writers: [] }),
      'MAX_WRITER_DELAY',
    );
    expect(maxDelay).toBe(365n * 24n * 3_600n);
    expect(await constructorRefusal([0n, admin.address, []])).toBe('WriterDelayOutOfRange');
    expect(await constructorRefusal([maxDelay + 1n, admin.address, []])).toBe(
      'WriterDelayOutOfRange',
    );
    expect(await constructorRefusal([1n, '0x0000000000000000000000000000000000000000', []])).toBe(
      'AdminZero',
    );
    expect(
      await constructorRefusal([1n, admin.address, ['0x0000000000000000000000000000000000000000']]),
    ).toBe('WriterZero');
    expect(await constructorRefusal([1n, admin.address, [writer.address, writer.address]])).toBe(
      'WriterUnchanged',
    );
  });
});

describe('ReceiptAnchor anchoring', () => {
  let contract: Address;

  beforeAll(async () => {
    contract = await deploy({
      delaySeconds: TEST_DELAY_SECONDS,
      admin: admin.address,
      writers: [writer.address],
    });
  });

  it('anchors a batch in one transaction under 100,000 gas, with Anchored(root, firstSeq, count, writer) and the batch record', async () => {
    const first = await anchorAs(writer, contract, ROOT_A, 0n, 1_000);
    const receipt = await publicClient.getTransactionReceipt({ hash: first.txHash });
    const events = parseEventLogs({ abi: receiptAnchorAbi, logs: receipt.logs });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      eventName: 'Anchored',
      args: { root: ROOT_A, firstSeq: 0n, count: 1_000, writer: writer.address },
    });
    expect(await readBatch(publicClient, contract, ROOT_A)).toEqual({
      firstSeq: 0n,
      count: 1_000,
      blockNumber: first.blockNumber,
    });
    expect(await read(contract, 'nextSeq')).toBe(1_000n);

    const second = await anchorAs(writer, contract, ROOT_B, 1_000n, 1_000);
    expect(first.gasUsed).toBeLessThanOrEqual(MAX_ANCHOR_GAS);
    expect(second.gasUsed).toBeLessThanOrEqual(MAX_ANCHOR_GAS);
    console.log(
      `ReceiptAnchor.anchor gas: first batch ${first.gasUsed}, later batches ${second.gasUsed} (${Number(second.gasUsed) / 1_000} per receipt at 1,000)`,
    );
  });

  it('reads a batch’s event back by root and by firstSeq, with its transaction and block', async () => {
    const byRoot = await readAnchoredEvent(publicClient, contract, { root: ROOT_B });
    const bySeq = await readAnchoredEvent(publicClient, contract, { firstSeq: 1_000n });
    expect(byRoot).toEqual(bySeq);
    const receipt = await publicClient.getTransactionReceipt({ hash: byRoot!.txHash });
    expect(byRoot).toEqual({
      root: ROOT_B,
      firstSeq: 1_000n,
      count: 1_000,
      writer: writer.address,
      txHash: receipt.transactionHash,
      blockNumber: receipt.blockNumber,
    });
    expect(await readAnchoredEvent(publicClient, contract, { root: ROOT_C })).toBeNull();
    expect(await readAnchoredEvent(publicClient, contract, { firstSeq: 5n })).toBeNull();
    expect(await readBatch(publicClient, contract, ROOT_C)).toBeNull();
  });

  it('refuses anyone who is not a writer, the admin included', async () => {
    expect(await refusal(anchorAs(stranger, contract, ROOT_C, 2_000n, 1))).toBe('NotWriter');
    expect(await refusal(anchorAs(admin, contract, ROOT_C, 2_000n, 1))).toBe('NotWriter');
  });

  it('refuses a replayed batch, a gap, an overlap, a root anchored before, an empty batch and the zero root', async () => {
    expect(await refusal(anchorAs(writer, contract, ROOT_B, 1_000n, 1_000))).toBe(
      'NonContiguousBatch',
    );
    expect(await refusal(anchorAs(writer, contract, ROOT_C, 2_001n, 1))).toBe('NonContiguousBatch');
    expect(await refusal(anchorAs(writer, contract, ROOT_C, 1_999n, 2))).toBe('NonContiguousBatch');
    expect(await refusal(anchorAs(writer, contract, ROOT_A, 2_000n, 1))).toBe(
      'RootAlreadyAnchored',
    );
    expect(
      await refusal(
        publicClient.simulateContract({
          address: contract,
          abi: receiptAnchorAbi,
          functionName: 'anchor',
          args: [ROOT_C, 2_000n, 0],
          account: writer,
        }),
      ),
    ).toBe('EmptyBatch');
    expect(await refusal(anchorAs(writer, contract, `0x${'00'.repeat(32)}`, 2_000n, 1))).toBe(
      'RootZero',
    );
    expect(await read(contract, 'nextSeq')).toBe(2_000n);
  });
});

describe('ReceiptAnchor writer timelock', () => {
  let contract: Address;
  const change = (account: TestAccount, sender: TestAccount, allowed: boolean) => ({
    publicClient,
    sender: walletOf(sender),
    contract,
    account: account.address,
    allowed,
  });

  beforeAll(async () => {
    contract = await deploy({
      delaySeconds: TEST_DELAY_SECONDS,
      admin: admin.address,
      writers: [writer.address],
    });
  });

  it('adds a writer only after the delay: refused one second early, executable at eta by anyone, once', async () => {
    expect(await refusal(proposeWriter(change(newWriter, stranger, true)))).toBe('NotAdmin');
    const proposed = await proposeWriter(change(newWriter, admin, true));
    const proposedAt = (await publicClient.getBlock({ blockNumber: proposed.blockNumber }))
      .timestamp;
    const eta = proposedAt + BigInt(TEST_DELAY_SECONDS);
    expect(await readWriterState(publicClient, contract, newWriter.address)).toEqual({
      isWriter: false,
      pending: { allowed: true, etaUnixS: eta },
    });
    expect(await refusal(proposeWriter(change(newWriter, admin, true)))).toBe(
      'WriterProposalPending',
    );

    expect(await refusal(executeWriter(change(newWriter, stranger, true)))).toBe(
      'WriterProposalNotDue',
    );
    await travelTo(eta - 1n);
    expect(await refusal(executeWriter(change(newWriter, stranger, true)))).toBe(
      'WriterProposalNotDue',
    );
    expect(await refusal(anchorAs(newWriter, contract, ROOT_A, 0n, 1))).toBe('NotWriter');
    await travelTo(eta);
    expect(await refusal(executeWriter(change(newWriter, stranger, false)))).toBe(
      'WriterProposalMismatch',
    );
    const executed = await executeWriter(change(newWriter, stranger, true));
    const events = parseEventLogs({
      abi: receiptAnchorAbi,
      logs: (await publicClient.getTransactionReceipt({ hash: executed.txHash })).logs,
    });
    expect(events).toMatchObject([
      { eventName: 'WriterSet', args: { account: newWriter.address, allowed: true } },
    ]);
    expect(await refusal(executeWriter(change(newWriter, stranger, true)))).toBe(
      'NoWriterProposal',
    );

    await anchorAs(newWriter, contract, ROOT_A, 0n, 3);
    expect(await readAnchoredEvent(publicClient, contract, { root: ROOT_A })).toMatchObject({
      writer: newWriter.address,
      firstSeq: 0n,
      count: 3,
    });
  });

  it('lets only the admin cancel a proposal, which then never executes', async () => {
    await proposeWriter(change(stranger, admin, true));
    expect(await refusal(cancelWriterProposal(change(stranger, stranger, true)))).toBe('NotAdmin');
    const cancelled = await cancelWriterProposal(change(stranger, admin, true));
    const events = parseEventLogs({
      abi: receiptAnchorAbi,
      logs: (await publicClient.getTransactionReceipt({ hash: cancelled.txHash })).logs,
    });
    expect(events).toMatchObject([
      { eventName: 'WriterProposalCancelled', args: { account: stranger.address, allowed: true } },
    ]);
    await testClient.increaseTime({ seconds: TEST_DELAY_SECONDS * 2 });
    await testClient.mine({ blocks: 1 });
    expect(await refusal(executeWriter(change(stranger, stranger, true)))).toBe('NoWriterProposal');
    expect(await refusal(cancelWriterProposal(change(stranger, admin, true)))).toBe(
      'NoWriterProposal',
    );
    expect(await readWriterState(publicClient, contract, stranger.address)).toEqual({
      isWriter: false,
      pending: null,
    });
  });

  it('removes a writer through the same delay, and refuses no-op and zero-address proposals', async () => {
    expect(await refusal(proposeWriter(change(writer, admin, true)))).toBe('WriterUnchanged');
    expect(await refusal(proposeWriter(change(stranger, admin, false)))).toBe('WriterUnchanged');
    expect(
      await refusal(
        proposeWriter({
          ...change(stranger, admin, true),
          account: '0x0000000000000000000000000000000000000000',
        }),
      ),
    ).toBe('WriterZero');

    await proposeWriter(change(writer, admin, false));
    await anchorAs(writer, contract, ROOT_B, 3n, 1); // still a writer while the removal waits
    await testClient.increaseTime({ seconds: TEST_DELAY_SECONDS });
    await testClient.mine({ blocks: 1 });
    await executeWriter(change(writer, admin, false));
    expect(await readWriterState(publicClient, contract, writer.address)).toEqual({
      isWriter: false,
      pending: null,
    });
    expect(await refusal(anchorAs(writer, contract, ROOT_C, 4n, 1))).toBe('NotWriter');
  });
});

describe('ReceiptAnchor mainnet configuration', () => {
  it('starts with no writer and a three-day delay; its writer anchors only after waiting it out', async () => {
    const contract = await deploy(mainnetReceiptAnchorConfig(admin.address));
    expect(await read(contract, 'WRITER_DELAY')).toBe(BigInt(MAINNET_WRITER_DELAY_SECONDS));
    expect(MAINNET_WRITER_DELAY_SECONDS).toBe(259_200);
    expect(await refusal(anchorAs(writer, contract, ROOT_A, 0n, 1))).toBe('NotWriter');

    await proposeWriter({
      publicClient,
      sender: walletOf(admin),
      contract,
      account: writer.address,
      allowed: true,
    });
    await testClient.increaseTime({ seconds: MAINNET_WRITER_DELAY_SECONDS - 60 });
    await testClient.mine({ blocks: 1 });
    expect(
      await refusal(
        executeWriter({
          publicClient,
          sender: walletOf(writer),
          contract,
          account: writer.address,
          allowed: true,
        }),
      ),
    ).toBe('WriterProposalNotDue');
    await testClient.increaseTime({ seconds: 60 });
    await testClient.mine({ blocks: 1 });
    await executeWriter({
      publicClient,
      sender: walletOf(writer),
      contract,
      account: writer.address,
      allowed: true,
    });
    await anchorAs(writer, contract, ROOT_A, 0n, 1);
    expect(await readBatch(publicClient, contract, ROOT_A)).toMatchObject({
      firstSeq: 0n,
      count: 1,
    });
  });
});

describe('ReceiptAnchor with the receipts Merkle tree', () => {
  it('anchors a tree root whose every receipt proof checks against the chain with viem alone; one changed byte fails', async () => {
    const contract = await deploy({
      delaySeconds: TEST_DELAY_SECONDS,
      admin: admin.address,
      writers: [writer.address],
    });
    const receipts = Array.from({ length: 13 }, (_, i) => ({
      receiptId: keccak256(concat(['0x72', numberToHex(i, { size: 4 })])),
      digest: keccak256(concat(['0x64', numberToHex(i, { size: 4 })])),
    }));
    const leaves = receipts.map(({ receiptId, digest }) => receiptLeafData(receiptId, digest));
    const tree = buildMerkleTree(receiptMerkleHash, leaves);
    const root = bytesToHex(tree.root);
    await anchorAs(writer, contract, root, 0n, leaves.length);

    const batch = await publicClient.readContract({
      address: contract,
      abi: receiptAnchorAbi,
      functionName: 'batchOf',
      args: [root],
    });
    receipts.forEach(({ receiptId, digest }, index) => {
      const proof = proofToHex(tree.inclusionProof(index));
      expect(viemOnlyRoot(concat([receiptId, digest]), index, batch.count, proof)).toBe(root);
      const tamperedDigest = `${digest.slice(0, -2)}${digest.endsWith('00') ? '01' : '00'}` as Hex;
      expect(viemOnlyRoot(concat([receiptId, tamperedDigest]), index, batch.count, proof)).not.toBe(
        root,
      );
    });
  });
});
