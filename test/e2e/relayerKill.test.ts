// A relayer killed mid-group (issue #33): a real `spend-control start` process settles x402
// payments in groups (X402_GROUP_SETTLEMENT) on an anvil chain whose mining the test controls, and
// is killed with SIGKILL while a group of several authorizations from several payers is in flight:
// - in the mempool: automine is off and the group transaction waits in the txpool; then one block
//   mines it (with the authorizations of a payer whose balance covers only one refused inside it),
//   the process restarts on the same database and chain, and the clients present the very same
//   headers again (docs/x402.md); then a third party who saw the group in the mempool submits every
//   member that is still usable once its payer has funds again;
// - before the node: a JSON-RPC proxy holds the group's eth_sendRawTransaction, the process dies,
//   the proxy drops it (the node never sees it), the process restarts, the headers come again.
// Last, the chain's clock passes every validBefore and the payments still open are decided.
// Throughout: every authorization is either paid exactly once on chain and booked exactly once,
// or refused only once the chain proves it unusable, and never charged; no nonce used twice; each
// payer's balance on chain is what the ledger says it paid; the books balance; nothing is left
// SETTLING or PENDING.
import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  decodePaymentSignatureHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import { type Address, type Hex, decodeFunctionData, parseTransaction } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { eip3009TokenAbi, groupSettlementAbi } from '../../contracts/artifacts/abis';
import { type DevnetChains, startDevnetChains } from '../../devnet/chains';
import {
  type AnvilTestClient,
  type ChainPublicClient,
  createAnvilTestClient,
  createChainPublicClient,
  createChainWalletClient,
} from '../../platform/chain/clients';
import { authorizationState } from '../../platform/chain/eip3009Facts';
import {
  mintToken,
  readTokenBalance,
  submitTransferWithAuthorization,
} from '../../platform/chain/tokens';
import { createTestDatabase, type TestDatabase } from '../../platform/db/testDb';
import { accountId, assetId, FEE_RECEIVER_REF } from '../../subgraphs/ledger';
import { freePort, startReplica, type Replica } from '../support/fleet';
import { type HoldingRpc, startHoldingRpc } from '../support/holdingRpc';
import { officialClient } from '../support/officialClient';
import type { TestStack } from '../support/stack';
import { feeReceiverDrift, trialBalanceLines } from '../support/x402Books';
import { signedAuthorizationOf } from '../support/paymentHeaders';

jest.setTimeout(120_000);

const PRICE = 10_000n;
const POLLING = { pollingIntervalMs: 20 };
/** Long enough that the group is still awaited when the process dies; the lease lapses soon after. */
const SETTLE_TIMEOUT_MS = 10_000;
const LEASE_MS = 11_000;

let db: TestDatabase;
let devnet: DevnetChains;
let rpc: HoldingRpc;
let chain: ChainPublicClient;
let anvil: AnvilTestClient;
let token: Address;
let gateway: Replica;
let port: number;
const adminToken = randomBytes(32).toString('hex');
const secrets = {
  session: randomBytes(32).toString('hex'),
  actor: randomBytes(32).toString('hex'),
};

/** One signed payment (an EIP-3009 authorization in a PAYMENT-SIGNATURE header) and its answers. */
interface Payment {
  readonly payer: PrivateKeyAccount;
  readonly header: string;
  readonly nonce: Hex;
  readonly validBefore: bigint;
  /** Every status the service answered this header with (0: the connection died on the way). */
  readonly statuses: number[];
  /** The transaction PAYMENT-RESPONSE named on the 200, if one came. */
  paidBy: string | null;
  /** The x402 reason of the last 402, if one came. */
  refusal: string | null;
}

interface Payer {
  readonly account: PrivateKeyAccount;
  /** Minted to it so far (its start, and what it was given again later). */
  minted: bigint;
  readonly payments: Payment[];
}

/** Every payer of this file, for the books at the end. */
const payers: Payer[] = [];

function gatewayEnv(): Record<string, string> {
  const { funding, settlement } = devnet.info.chains;
  return {
    NODE_ENV: 'test',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: db.url,
    MIGRATION_DATABASE_URL: db.ownerUrl,
    // The gateway's whole view of the funding chain goes through the proxy that can hold sends.
    FUNDING_RPC_URL: rpc.url,
    SETTLEMENT_RPC_URL: settlement.rpcUrl,
    FUNDING_TOKEN_ADDRESS: funding.token.address,
    SETTLEMENT_TOKEN_ADDRESS: settlement.token.address,
    TREASURY_PRIVATE_KEY: devnet.keys.treasury.exportPrivateKey(),
    RELAYER_PRIVATE_KEY: devnet.keys.relayer.exportPrivateKey(),
    FEE_RECEIVER_ADDRESS: devnet.info.addresses.feeReceiver,
    ADMIN_TOKEN_HASHES: createHash('sha256').update(adminToken).digest('hex'),
    SESSION_SECRET: secrets.session,
    INTERNAL_ACTOR_SECRET: secrets.actor,
    X402_GROUP_SETTLEMENT: 'true',
    X402_GROUP_SETTLEMENT_ADDRESS: funding.groupSettlement!,
    X402_GROUP_MAX_SIZE: '64',
    // A first arrival waits up to 1 s for company: payments presented together share one group.
    X402_GROUP_MAX_WAIT_MS: '1000',
    X402_SETTLE_TIMEOUT_MS: String(SETTLE_TIMEOUT_MS),
    X402_LEASE_MS: String(LEASE_MS),
    X402_RECONCILE_INTERVAL_MS: '500',
    RATE_LIMIT_IP_PER_MINUTE: '1000000',
    RATE_LIMIT_IP_BURST: '1000000',
  };
}

/** What the support helpers read of a stack, pointed at the gateway. */
function stackView(): TestStack {
  return {
    url: gateway.url,
    adminToken,
    db: { pool: db.pool },
  } as unknown as TestStack;
}

beforeAll(async () => {
  for (const name of ['FUNDING_RPC_URL', 'SETTLEMENT_RPC_URL', 'DATA_DIR'])
    delete process.env[name];
  db = await createTestDatabase();
  devnet = await startDevnetChains({ dataDir: null });
  const funding = devnet.info.chains.funding;
  chain = createChainPublicClient(funding, POLLING);
  anvil = createAnvilTestClient(funding);
  token = funding.token.address;
  rpc = await startHoldingRpc(funding.rpcUrl);
  port = await freePort();
  gateway = await startReplica(port, gatewayEnv());
}, 120_000);

afterAll(async () => {
  await anvil?.setAutomine(true).catch(() => undefined);
  await gateway?.stop();
  await rpc?.close();
  await devnet?.stop();
  await db?.drop();
});

async function until<T>(what: string, probe: () => Promise<T | null>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== null) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

async function mint(payer: Payer, amountAtomic: bigint): Promise<void> {
  const minter = createChainWalletClient(
    devnet.info.chains.funding,
    devnet.keys.deployer.account,
    POLLING,
  );
  await mintToken({ publicClient: chain, minter, token, to: payer.account.address, amountAtomic });
  payer.minted += amountAtomic;
}

/** A fresh payer holding `balance`, with `count` payments for /ping_service signed by the official client. */
async function payerWith(balance: bigint, count: number): Promise<Payer> {
  const payer: Payer = {
    account: privateKeyToAccount(generatePrivateKey()),
    minted: 0n,
    payments: [],
  };
  await mint(payer, balance);
  const challenge = await fetch(`${gateway.url}/ping_service`);
  expect(challenge.status).toBe(402);
  const required = decodePaymentRequiredHeader(challenge.headers.get('payment-required')!);
  const client = officialClient(payer.account, {
    network: devnet.info.chains.funding.caip2 as `${string}:${string}`,
    asset: token.toLowerCase(),
  });
  for (let n = 0; n < count; n += 1) {
    const header = encodePaymentSignatureHeader(await client.createPaymentPayload(required));
    const { authorization } = decodePaymentSignatureHeader(header).payload as {
      authorization: { nonce: Hex; validBefore: string };
    };
    payer.payments.push({
      payer: payer.account,
      header,
      nonce: authorization.nonce.toLowerCase() as Hex,
      validBefore: BigInt(authorization.validBefore),
      statuses: [],
      paidBy: null,
      refusal: null,
    });
  }
  payers.push(payer);
  return payer;
}

/** Three payers with plenty and one whose balance covers one call of its three. */
async function cast(): Promise<{ full: Payer[]; short: Payer; all: Payment[] }> {
  const full: Payer[] = [];
  for (let n = 0; n < 3; n += 1) full.push(await payerWith(1_000_000n, 3));
  const short = await payerWith(PRICE, 3);
  const all = [...full, short].flatMap((payer) => payer.payments);
  return { full, short, all };
}

/** Presents the payment's header once, as a client does, and notes the answer. */
async function present(payment: Payment): Promise<number> {
  const answer = await fetch(`${gateway.url}/ping_service`, {
    headers: { 'payment-signature': payment.header },
  }).then(
    async (response) => {
      await response.arrayBuffer();
      return response;
    },
    () => null,
  );
  const status = answer?.status ?? 0;
  payment.statuses.push(status);
  if (answer && status === 200)
    payment.paidBy = decodePaymentResponseHeader(
      answer.headers.get('payment-response')!,
    ).transaction.toLowerCase();
  if (answer && status === 402)
    payment.refusal =
      decodePaymentRequiredHeader(answer.headers.get('payment-required')!).error ?? null;
  return status;
}

interface Row {
  payment_id: string;
  state: string;
  tx_hash: string | null;
  network: string;
  asset: string;
  failure_reason: string | null;
}

async function rowOf(payment: Payment): Promise<Row | null> {
  const { rows } = await db.pool.query<Row>(
    'SELECT * FROM ledger.service_payments WHERE payer = $1 AND lower(nonce) = $2',
    [payment.payer.address.toLowerCase(), payment.nonce],
  );
  expect(rows.length).toBeLessThanOrEqual(1);
  return rows[0] ?? null;
}

const decided = (payment: Payment) => payment.statuses.some((s) => s === 200 || s === 402);

/**
 * Presents the same header again until the service decides it (200 or 402) or parks it (503 while
 * its record is PENDING: the chain has not decided), every 250 ms, as docs/x402.md asks.
 */
async function presentUntilSettledDown(payment: Payment): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!decided(payment)) {
    const status = await present(payment);
    if (status === 503 && (await rowOf(payment))?.state === 'PENDING') return;
    if (Date.now() > deadline)
      throw new Error(`${payment.nonce} still answers ${payment.statuses.join(',')}`);
    if (!decided(payment)) await sleep(250);
  }
}

async function kill(): Promise<void> {
  gateway.child.kill('SIGKILL');
  await gateway.exited;
}

async function restart(): Promise<void> {
  gateway = await startReplica(port, gatewayEnv());
}

/** The authorizations (payer, nonce) a GroupSettlement.settle call carries. */
function membersOf(data: Hex): Array<{ from: string; nonce: string }> {
  const { functionName, args } = decodeFunctionData({ abi: groupSettlementAbi, data });
  expect(functionName).toBe('settle');
  const [, authorizations] = args as readonly [Address, readonly { from: Address; nonce: Hex }[]];
  return authorizations.map((item) => ({
    from: item.from.toLowerCase(),
    nonce: item.nonce.toLowerCase(),
  }));
}

/** The group transactions waiting in the node's txpool. */
async function groupsInTxpool(): Promise<Array<{ hash: Hex; data: Hex }>> {
  const contract = devnet.info.chains.funding.groupSettlement!.toLowerCase();
  const { pending } = await anvil.getTxpoolContent();
  return Object.values(pending)
    .flatMap((byNonce) => Object.values(byNonce))
    .filter((tx) => tx.to?.toLowerCase() === contract)
    .map((tx) => ({ hash: tx.hash, data: tx.input }));
}

/** Claims (any state) the service holds for these payments. */
async function claimsOf(payments: readonly Payment[]): Promise<Row[]> {
  const rows = await Promise.all(payments.map(rowOf));
  return rows.filter((row): row is Row => row !== null);
}

function isMember(members: ReturnType<typeof membersOf>, payment: Payment): boolean {
  const from = payment.payer.address.toLowerCase();
  return members.some((member) => member.from === from && member.nonce === payment.nonce);
}

async function usedOnChain(payment: Payment, blockNumber?: bigint): Promise<boolean> {
  return authorizationState(chain, token, payment.payer.address, payment.nonce, blockNumber);
}

test('killed while its group transaction waits in the mempool: after a restart and the same headers again, every member paid once and booked once', async () => {
  const { full, short, all } = await cast();
  await anvil.setAutomine(false);
  const answers = all.map(present);
  // Every payment claimed and a group of several waiting in the mempool: now the process dies.
  const [group] = await until('a group in the mempool and every payment claimed', async () => {
    const groups = await groupsInTxpool();
    const claimed = await claimsOf(all);
    return groups.length > 0 && claimed.length === all.length ? groups : null;
  });
  await kill();
  await Promise.all(answers);
  expect(all.every((payment) => payment.statuses.join() === '0')).toBe(true);
  const members = membersOf(group.data);
  const shortInGroup = short.payments.filter((payment) => isMember(members, payment));
  // The group carries several payers' authorizations, and more of the short payer's than it can pay.
  expect(members.length).toBeGreaterThanOrEqual(2);
  expect(shortInGroup.length).toBeGreaterThanOrEqual(2);
  expect((await claimsOf(all)).map((row) => row.state)).toEqual(all.map(() => 'SETTLING'));

  await anvil.mine({ blocks: 1 });
  await anvil.setAutomine(true);
  expect((await chain.getTransactionReceipt({ hash: group.hash })).status).toBe('success');
  const refusedInGroup: Payment[] = [];
  for (const payment of shortInGroup)
    if (!(await usedOnChain(payment))) refusedInGroup.push(payment);
  expect(refusedInGroup.length).toBe(shortInGroup.length - 1);

  await restart();
  await Promise.all(all.map(presentUntilSettledDown));
  for (const payer of full)
    for (const payment of payer.payments) expect(payment.statuses.at(-1)).toBe(200);
  for (const payment of all) {
    // Paid in the group: booked from the group's own Transfer.
    if (isMember(members, payment) && (await usedOnChain(payment)))
      expect(payment.paidBy).toBe(group.hash.toLowerCase());
  }

  // Someone who saw the group in the mempool submits its members that moved nothing, once their
  // payer can pay: a refusal of one of them would have been no proof it was never charged.
  const thirdParty = privateKeyToAccount(generatePrivateKey());
  await anvil.setBalance({ address: thirdParty.address, value: 10n ** 18n });
  const relayer = createChainWalletClient(devnet.info.chains.funding, thirdParty, POLLING);
  for (const payment of refusedInGroup) {
    await mint(short, PRICE);
    await submitTransferWithAuthorization({
      publicClient: chain,
      relayer,
      authorization: await signedAuthorizationOf(payment.header, chain, token),
    });
  }
  // The same headers again: each is now paid, by the third party's transaction, and booked once.
  await Promise.all(refusedInGroup.map(presentUntilSettledDown));
  for (const payment of refusedInGroup) expect(payment.statuses.at(-1)).toBe(200);
  await expectEveryOutcomeHonest(all);
});

test('killed before its group transaction reached the node: the transaction never existed, and the same headers are settled once after a restart', async () => {
  const { full, short, all } = await cast();
  rpc.holdSends(true);
  const answers = all.map(present);
  const [held] = await until('a group send held and every payment claimed', async () => {
    const sends = rpc.held();
    const claimed = await claimsOf(all);
    return sends.length > 0 && claimed.length === all.length ? sends : null;
  });
  await kill();
  rpc.drop();
  rpc.holdSends(false);
  await Promise.all(answers);
  expect(all.every((payment) => payment.statuses.join() === '0')).toBe(true);
  const sent = parseTransaction(held.serialized);
  expect(sent.to?.toLowerCase()).toBe(devnet.info.chains.funding.groupSettlement!.toLowerCase());
  expect(membersOf(sent.data!).length).toBeGreaterThanOrEqual(2);
  // The node never saw it: unknown hash, and the relayer's nonce is still the one it was signed with.
  await expect(chain.getTransaction({ hash: held.txHash })).rejects.toThrow(/could not be found/i);
  const relayer = devnet.keys.relayer.address;
  expect(await chain.getTransactionCount({ address: relayer, blockTag: 'pending' })).toBe(
    sent.nonce,
  );
  expect((await claimsOf(all)).map((row) => row.state)).toEqual(all.map(() => 'SETTLING'));

  await restart();
  await Promise.all(all.map(presentUntilSettledDown));
  for (const payer of full)
    for (const payment of payer.payments) expect(payment.statuses.at(-1)).toBe(200);
  // The short payer's balance pays exactly one; nothing was refused that the chain could still charge.
  expect(short.payments.filter((payment) => payment.statuses.at(-1) === 200)).toHaveLength(1);
  await expectEveryOutcomeHonest(all);
});

test('once the chain is past every validBefore, the payments still open are refused uncharged; the books balance and match the chain', async () => {
  const open = payers.flatMap((payer) => payer.payments).filter((payment) => !decided(payment));
  // The short payers' payments its balance could not cover, parked after the restarts.
  expect(open.length).toBeGreaterThan(0);
  const latest = await chain.getBlock({ blockTag: 'latest' });
  const lastValidBefore = open.reduce(
    (max, payment) => (payment.validBefore > max ? payment.validBefore : max),
    latest.timestamp,
  );
  await anvil.setNextBlockTimestamp({ timestamp: lastValidBefore + 1n });
  await anvil.mine({ blocks: 1 });
  await Promise.all(open.map(presentUntilSettledDown));
  for (const payment of open) {
    expect(payment.statuses.at(-1)).toBe(402);
    expect(payment.refusal).toBe('invalid_exact_evm_payload_authorization_valid_before');
  }
  await expectEveryOutcomeHonest(payers.flatMap((payer) => payer.payments));

  const { rows } = await db.pool.query(
    `SELECT payment_id, state FROM ledger.service_payments WHERE state IN ('SETTLING', 'PENDING')`,
  );
  expect(rows).toEqual([]);
  for (const payer of payers) await expectPayerBooks(payer);
  for (const line of await trialBalanceLines(stackView()))
    expect(line).toMatchObject({ netAtomic: '0', balanced: true });
  for (const drift of await feeReceiverDrift(stackView(), devnet))
    expect(drift.onchainAtomic).toBe(drift.ledgerAtomic);
});

/** Net ledger movement per account over the groups of one payment (fee, clear, reversal). */
async function ledgerOf(paymentId: string): Promise<Map<string, bigint>> {
  const { rows } = await db.pool.query<{ account_id: string; net: string }>(
    `SELECT e.account_id, sum(e.amount)::text AS net
       FROM ledger.entries e JOIN ledger.groups g ON g.group_id = e.group_id
      WHERE g.idempotency_key IN ('x402:fee:' || $1, 'x402:clear:' || $1, 'x402:reverse:' || $1)
      GROUP BY e.account_id`,
    [paymentId],
  );
  return new Map(rows.map((row) => [row.account_id, BigInt(row.net)]));
}

/** Every AuthorizationUsed the token emitted for `payer`: (nonce, transaction). */
async function usesBy(payer: Address): Promise<Array<{ nonce: string; txHash: string }>> {
  const logs = await chain.getContractEvents({
    address: token,
    abi: eip3009TokenAbi,
    eventName: 'AuthorizationUsed',
    args: { authorizer: payer },
    fromBlock: 0n,
  });
  return logs.map((log) => ({
    nonce: String(log.args.nonce).toLowerCase(),
    txHash: log.transactionHash.toLowerCase(),
  }));
}

/**
 * Each decided payment: 200 → its nonce used once on chain, by the transaction PAYMENT-RESPONSE
 * names, whose receipt moves the price to the fee receiver, and booked once (the fee receiver's
 * treasury up by the price, nothing left in SUSPENSE); 402 → unused at a block at or past its
 * validBefore (the chain can never charge it) and nothing booked. Open ones are parked, never
 * refused: the chain has not decided them.
 */
async function expectEveryOutcomeHonest(payments: readonly Payment[]): Promise<void> {
  for (const payment of payments) {
    const answered = payment.statuses.filter((status) => status !== 0);
    expect(answered.filter((status) => ![200, 402, 503].includes(status))).toEqual([]);
    const row = await rowOf(payment);
    const uses = (await usesBy(payment.payer.address)).filter((use) => use.nonce === payment.nonce);
    if (payment.statuses.at(-1) === 200) await expectPaidOnce(payment, row, uses);
    else if (payment.statuses.at(-1) === 402) await expectRefusedUncharged(payment, row, uses);
    else expect(row?.state).toBe('PENDING');
  }
}

async function expectPaidOnce(
  payment: Payment,
  row: Row | null,
  uses: Array<{ nonce: string; txHash: string }>,
): Promise<void> {
  expect(uses).toHaveLength(1);
  expect(payment.paidBy).toBe(uses[0].txHash);
  expect(row).toMatchObject({ state: 'ANSWERED', tx_hash: uses[0].txHash });
  const receipt = await chain.getTransactionReceipt({ hash: uses[0].txHash as Hex });
  expect(receipt.status).toBe('success');
  const ledger = await ledgerOf(row!.payment_id);
  const asset = assetId(row!.network, row!.asset);
  expect(ledger.get(accountId('TREASURY', asset, FEE_RECEIVER_REF))).toBe(PRICE);
  expect(ledger.get(accountId('SUSPENSE', asset, row!.payment_id)) ?? 0n).toBe(0n);
}

async function expectRefusedUncharged(
  payment: Payment,
  row: Row | null,
  uses: Array<{ nonce: string; txHash: string }>,
): Promise<void> {
  expect(uses).toEqual([]);
  const latest = await chain.getBlock({ blockTag: 'latest' });
  expect(await usedOnChain(payment, latest.number)).toBe(false);
  // Refused only on proof: the chain is past its validBefore, so it can never be charged.
  expect(latest.timestamp).toBeGreaterThanOrEqual(payment.validBefore);
  if (row === null) return;
  expect(row.state).toBe('FAILED');
  for (const net of (await ledgerOf(row.payment_id)).values()) expect(net).toBe(0n);
}

/** The payer's balance on chain is what it was given less what the ledger says it paid; one use per paid call. */
async function expectPayerBooks(payer: Payer): Promise<void> {
  const address = payer.account.address.toLowerCase();
  const { rows } = await db.pool.query<{ paid: string; n: string }>(
    `SELECT COALESCE(sum(amount), 0)::text AS paid, count(*)::text AS n
       FROM ledger.service_payments WHERE payer = $1 AND state IN ('SETTLED', 'ANSWERED')`,
    [address],
  );
  const ledgerPaid = BigInt(rows[0].paid);
  const answered = payer.payments.filter((payment) => payment.statuses.at(-1) === 200).length;
  expect(ledgerPaid).toBe(PRICE * BigInt(answered));
  expect(await readTokenBalance(chain, token, payer.account.address)).toBe(
    payer.minted - ledgerPaid,
  );
  expect(await usesBy(payer.account.address)).toHaveLength(answered);
}
