// x402 settlements that do not simply succeed, end to end on the devnet (anvil eip155:196): a
// validBefore beyond the offer's timeout is refused before the chain; a settlement the payer makes
// revert stays open while its authorization can still move money (a third party submitting it
// later books the fee once and the call answers), and becomes FAILED only on chain proof (nonce
// used elsewhere, or expired unused); a reconciler whose reads race a mined block never reverses a
// fee whose Transfer exists. Last, the books: trial balance zero, fee receiver on chain = ledger.
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  decodePaymentSignatureHeader,
} from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { type Address, type Hex, erc20Abi, parseGwei } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { type DevnetChains, startDevnetChains } from '../../devnet/chains';
import { Reconciler } from '../../gateway/x402/parkedPayments';
import { type SettlementRail, createSettlementRail } from '../../gateway/x402/rail';
import {
  type AnvilTestClient,
  type ChainPublicClient,
  createAnvilTestClient,
  createChainPublicClient,
  createChainWalletClient,
} from '../../platform/chain/clients';
import {
  mintToken,
  readTokenBalance,
  signTransferWithAuthorization,
  submitTransferWithAuthorization,
} from '../../platform/chain/tokens';
import { silentLogger } from '../../platform/log';
import { getPayment } from '../../subgraphs/ledger';
import { startTestStack, type TestStack } from '../support/stack';
import { feeReceiverDrift, trialBalanceLines } from '../support/x402Books';
import { officialFetch } from '../support/officialClient';
import { signedAuthorizationOf } from '../support/paymentHeaders';
import { signedPaymentHeader } from '../../devnet/agents/x402Payer';

const POLLING = { pollingIntervalMs: 20 };
const PING_PRICE = 10_000n;
const FUNDED = 1_000_000n;
const SETTLE_TIMEOUT_MS = 4_000;

let devnet: DevnetChains;
let stack: TestStack;
let publicClient: ChainPublicClient;
let anvil: AnvilTestClient;
let token: Address;
let feeReceiver: Address;
let treasuryAccount: string;
const sink = privateKeyToAccount(generatePrivateKey()).address;

function funding() {
  return devnet.info.chains.funding;
}

async function mint(to: Address, amountAtomic: bigint): Promise<void> {
  const minter = createChainWalletClient(funding(), devnet.keys.deployer.account, POLLING);
  await mintToken({ publicClient, minter, token, to, amountAtomic });
}

function balance(address: Address): Promise<bigint> {
  return readTokenBalance(publicClient, token, address);
}

/** A payer with tokens and gas (it sends its own transactions in these tests). */
async function newPayer(): Promise<PrivateKeyAccount> {
  const payer = privateKeyToAccount(generatePrivateKey());
  await mint(payer.address, FUNDED);
  await anvil.setBalance({ address: payer.address, value: 10n ** 18n });
  return payer;
}

function wallClockS(): bigint {
  return BigInt(Math.floor(Date.now() / 1000));
}

/** Now by whichever clock is ahead: the service judges validBefore by its own, the token by the chain's. */
async function laterClockS(): Promise<bigint> {
  const chainTimeS = (await publicClient.getBlock({ blockTag: 'latest' })).timestamp;
  return chainTimeS > wallClockS() ? chainTimeS : wallClockS();
}

async function challengeFor(path: string): Promise<PaymentRequired> {
  const response = await fetch(`${stack.url}${path}`);
  expect(response.status).toBe(402);
  return decodePaymentRequiredHeader(response.headers.get('payment-required')!);
}

function paidPing(header: string): Promise<Response> {
  return fetch(`${stack.url}/ping_service`, { headers: { 'payment-signature': header } });
}

/** The service's settlement, waiting in the mempool (automine is off). */
async function pendingSettlement(): Promise<Hex> {
  const relayer = devnet.keys.relayer.address.toLowerCase();
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const { pending } = await anvil.getTxpoolContent();
    const mine = Object.entries(pending).find(([sender]) => sender.toLowerCase() === relayer);
    if (mine) return Object.values(mine[1])[0].hash;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the service sent no settlement');
}

/**
 * Presents a payment with automine off; once the service's settlement waits in the mempool, the
 * payer moves its whole balance away with a higher tip, and one block mines both: the settlement
 * reverts inside the service's receipt timeout.
 */
async function presentAndFrontRun(
  payer: PrivateKeyAccount,
  present: () => Promise<Response>,
): Promise<{ response: Response; settlementTx: Hex }> {
  await anvil.setAutomine(false);
  try {
    const answer = present();
    const settlementTx = await pendingSettlement();
    const wallet = createChainWalletClient(funding(), payer, POLLING);
    await wallet.writeContract({
      address: token,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [sink, await balance(payer.address)],
      // Fixed gas: anvil estimates against the pending block, where the settlement already spent the fee.
      gas: 100_000n,
      maxPriorityFeePerGas: parseGwei('50'),
      maxFeePerGas: parseGwei('100'),
    });
    await anvil.mine({ blocks: 1 });
    const response = await answer;
    expect((await publicClient.getTransactionReceipt({ hash: settlementTx })).status).toBe(
      'reverted',
    );
    expect(await balance(payer.address)).toBe(0n);
    return { response, settlementTx };
  } finally {
    await anvil.setAutomine(true);
  }
}

async function paymentOf(payer: Address) {
  const { rows } = await stack.db.pool.query<{ payment_id: string }>(
    'SELECT payment_id FROM ledger.service_payments WHERE payer = $1',
    [payer.toLowerCase()],
  );
  expect(rows).toHaveLength(1);
  return (await getPayment(stack.db.pool, rows[0].payment_id))!;
}

async function groupKinds(paymentId: string): Promise<string[]> {
  const { rows } = await stack.db.pool.query<{ kind: string }>(
    `SELECT kind FROM ledger.groups WHERE idempotency_key LIKE 'x402:%:' || $1 ORDER BY seq`,
    [paymentId],
  );
  return rows.map((row) => row.kind);
}

async function accountBalance(account: string): Promise<bigint> {
  const { rows } = await stack.db.pool.query(
    'SELECT COALESCE(sum(amount), 0)::text AS balance FROM ledger.entries WHERE account_id = $1',
    [account],
  );
  return BigInt(rows[0].balance);
}

function suspenseOf(paymentId: string): string {
  return `SUSPENSE:eip155:196|${token.toLowerCase()}:${paymentId}`;
}

async function expectPending(response: Response): Promise<Record<string, unknown>> {
  expect(response.status).toBe(503);
  const body = (await response.json()) as { code: string; details: Record<string, unknown> };
  expect(body.code).toBe('PAYMENT_SETTLEMENT_PENDING');
  return body.details;
}

function refusalOf(response: Response): string | undefined {
  expect(response.status).toBe(402);
  return decodePaymentRequiredHeader(response.headers.get('payment-required')!).error;
}

beforeAll(async () => {
  devnet = await startDevnetChains({ dataDir: null });
  publicClient = createChainPublicClient(funding(), POLLING);
  anvil = createAnvilTestClient(funding());
  token = funding().token.address;
  feeReceiver = devnet.info.addresses.feeReceiver;
  treasuryAccount = `TREASURY:eip155:196|${token.toLowerCase()}:fee-receiver`;
  stack = await startTestStack({ x402: { devnet, settleTimeoutMs: SETTLE_TIMEOUT_MS } });
});

afterAll(async () => {
  await stack?.stop();
  await devnet?.stop();
});

describe('validBefore is bounded', () => {
  it('validBefore = 2^255 → 402 with the reason, nothing claimed or settled', async () => {
    const payer = await newPayer();
    const receiverBefore = await balance(feeReceiver);
    const response = await paidPing(
      await signedPaymentHeader(await challengeFor('/ping_service'), payer, 2n ** 255n),
    );
    expect(refusalOf(response)).toBe('invalid_exact_evm_payload_authorization_valid_before');
    expect(await response.text()).toBe('{}');
    expect(await balance(payer.address)).toBe(FUNDED);
    expect(await balance(feeReceiver)).toBe(receiverBefore);
    const { rows } = await stack.db.pool.query(
      'SELECT 1 FROM ledger.service_payments WHERE payer = $1',
      [payer.address.toLowerCase()],
    );
    expect(rows).toEqual([]);
  });

  it('just beyond maxTimeoutSeconds plus the clock allowance is refused; within it is paid', async () => {
    const required = await challengeFor('/ping_service');
    const beyond = await newPayer();
    const refused = await paidPing(
      await signedPaymentHeader(required, beyond, wallClockS() + 300n + 60n + 5n),
    );
    expect(refusalOf(refused)).toBe('invalid_exact_evm_payload_authorization_valid_before');
    expect(await balance(beyond.address)).toBe(FUNDED);

    const within = await newPayer();
    const paid = await paidPing(
      await signedPaymentHeader(required, within, wallClockS() + 300n + 30n),
    );
    expect(paid.status).toBe(200);
    expect(await balance(within.address)).toBe(FUNDED - PING_PRICE);
  });
});

describe('a reverted settlement stays open while the authorization can move money', () => {
  it('the payer makes the settlement revert; a third party later submits the same authorization: booked once, and the same header gets the call', async () => {
    const payer = await newPayer();
    const receiverBefore = await balance(feeReceiver);
    const treasuryBefore = await accountBalance(treasuryAccount);
    const sent: string[] = [];
    const { response, settlementTx } = await presentAndFrontRun(payer, () =>
      officialFetch(payer, { network: 'eip155:196', asset: token, sentSignatures: sent })(
        `${stack.url}/ping_service`,
      ),
    );
    expect(sent).toHaveLength(1);
    const [header] = sent;

    // Nothing moved, but the signed authorization is still good on chain: parked, not FAILED.
    const details = await expectPending(response);
    expect(details).toMatchObject({ transaction: null, revertedTransaction: settlementTx });
    const parked = await paymentOf(payer.address);
    expect(parked.state).toBe('PENDING');
    expect(await accountBalance(suspenseOf(parked.paymentId))).toBe(PING_PRICE);
    expect(await stack.stack.gateway.reconciler!.sweep()).toMatchObject({ failed: 0 });
    await expectPending(await paidPing(header));

    // The payer's balance comes back and someone else submits the same signed authorization.
    await mint(payer.address, PING_PRICE);
    const thirdParty = privateKeyToAccount(generatePrivateKey());
    await anvil.setBalance({ address: thirdParty.address, value: 10n ** 18n });
    const landed = await submitTransferWithAuthorization({
      publicClient,
      relayer: createChainWalletClient(funding(), thirdParty, POLLING),
      authorization: await signedAuthorizationOf(header, publicClient, token),
    });
    expect(await balance(feeReceiver)).toBe(receiverBefore + PING_PRICE);

    // The same header now runs the call, and its receipt names the transaction that paid.
    const answered = await paidPing(header);
    expect(answered.status).toBe(200);
    const body = await answered.text();
    expect(JSON.parse(body)).toMatchObject({ ok: true, tool: 'ping_service' });
    expect(decodePaymentResponseHeader(answered.headers.get('payment-response')!)).toMatchObject({
      success: true,
      transaction: landed.txHash,
    });
    const replay = await paidPing(header);
    expect(replay.status).toBe(200);
    expect(await replay.text()).toBe(body);

    const settled = await paymentOf(payer.address);
    expect(settled).toMatchObject({
      state: 'ANSWERED',
      txHash: landed.txHash,
      unpaidTxHash: settlementTx,
    });
    expect(await groupKinds(settled.paymentId)).toEqual(['SERVICE_FEE', 'SUSPENSE_MOVE']);
    expect(await accountBalance(suspenseOf(settled.paymentId))).toBe(0n);
    expect(await accountBalance(treasuryAccount)).toBe(treasuryBefore + PING_PRICE);
    expect(await balance(payer.address)).toBe(0n);
  });

  it('FAILED once the payer uses the nonce for another transfer: the parked fee is reversed', async () => {
    const payer = await newPayer();
    const header = await signedPaymentHeader(
      await challengeFor('/ping_service'),
      payer,
      wallClockS() + 300n,
    );
    const { response } = await presentAndFrontRun(payer, () => paidPing(header));
    await expectPending(response);

    const { nonce } = decodePaymentSignatureHeader(header).payload.authorization as { nonce: Hex };
    await mint(payer.address, 1n);
    const elsewhere = await signTransferWithAuthorization({
      publicClient,
      signer: payer,
      token,
      to: sink,
      valueAtomic: 1n,
      validBeforeUnixS: wallClockS() + 300n,
      nonce,
    });
    const used = await submitTransferWithAuthorization({
      publicClient,
      relayer: createChainWalletClient(funding(), payer, POLLING),
      authorization: elsewhere,
    });

    expect(refusalOf(await paidPing(header))).toBe('invalid_exact_evm_nonce_already_used');
    const failed = await paymentOf(payer.address);
    expect(failed).toMatchObject({
      state: 'FAILED',
      failureReason: 'invalid_exact_evm_nonce_already_used',
      evidenceTxHash: used.txHash,
    });
    expect(await groupKinds(failed.paymentId)).toEqual(['SERVICE_FEE', 'REVERSAL']);
    expect(await accountBalance(suspenseOf(failed.paymentId))).toBe(0n);
  });
});

describe('the reconciler reads the chain at one block', () => {
  it('an authorization mined between its reads, in a block before validBefore, is never reversed', async () => {
    const payer = await newPayer();
    const validBefore = (await laterClockS()) + 40n;
    const header = await signedPaymentHeader(
      await challengeFor('/ping_service'),
      payer,
      validBefore,
    );
    await anvil.setAutomine(false);
    try {
      // Sent, no receipt in time: parked. The settlement still waits in the mempool.
      await expectPending(await paidPing(header));
      const parked = await paymentOf(payer.address);
      expect(parked.state).toBe('PENDING');

      // Right after the reconciler learns the authorization is unused, the chain mines it (a block
      // before validBefore) and then a block at validBefore.
      const rail = createSettlementRail({
        chainId: funding().chainId,
        rpcUrl: funding().rpcUrl,
        token,
        relayerPrivateKey: devnet.keys.relayer.exportPrivateKey(),
        confirmationTimeoutMs: SETTLE_TIMEOUT_MS,
        pollingIntervalMs: 20,
      });
      let raced = false;
      const racing: SettlementRail = {
        ...rail,
        async authorizationUsed(...args: Parameters<SettlementRail['authorizationUsed']>) {
          const used = await rail.authorizationUsed(...args);
          if (!raced) {
            raced = true;
            await anvil.setNextBlockTimestamp({ timestamp: validBefore - 10n });
            await anvil.mine({ blocks: 1 });
            await anvil.setNextBlockTimestamp({ timestamp: validBefore });
            await anvil.mine({ blocks: 1 });
          }
          return used;
        },
      };
      const first = await new Reconciler({
        rail: racing,
        db: stack.db.pool,
        log: silentLogger,
      }).resolve(parked);
      expect(raced).toBe(true);
      expect(first.payment?.state).not.toBe('FAILED');
      expect(await groupKinds(parked.paymentId)).not.toContain('REVERSAL');
      expect(await balance(payer.address)).toBe(FUNDED - PING_PRICE);

      // The next look sees the Transfer and books it; the same header then gets the call.
      const second = await new Reconciler({ rail, db: stack.db.pool, log: silentLogger }).resolve(
        (await getPayment(stack.db.pool, parked.paymentId))!,
      );
      expect(second.payment?.state).toBe('SETTLED');
    } finally {
      await anvil.setAutomine(true);
    }
    const answered = await paidPing(header);
    expect(answered.status).toBe(200);
    const payment = await paymentOf(payer.address);
    expect(await groupKinds(payment.paymentId)).toEqual(['SERVICE_FEE', 'SUSPENSE_MOVE']);
    expect(await accountBalance(suspenseOf(payment.paymentId))).toBe(0n);
  });
});

describe('expiry is judged by chain time', () => {
  // Moves the chain's clock past this payment's validBefore: keep it last before the books.
  it('a reverted settlement whose authorization expires unused becomes FAILED and its parked fee is reversed', async () => {
    const payer = await newPayer();
    const validBefore = (await laterClockS()) + 30n;
    const header = await signedPaymentHeader(
      await challengeFor('/ping_service'),
      payer,
      validBefore,
    );
    const { response } = await presentAndFrontRun(payer, () => paidPing(header));
    await expectPending(response);
    await mint(payer.address, PING_PRICE);

    await anvil.setNextBlockTimestamp({ timestamp: validBefore });
    await anvil.mine({ blocks: 1 });
    expect(refusalOf(await paidPing(header))).toBe(
      'invalid_exact_evm_payload_authorization_valid_before',
    );
    const failed = await paymentOf(payer.address);
    expect(failed).toMatchObject({
      state: 'FAILED',
      failureReason: 'invalid_exact_evm_payload_authorization_valid_before',
    });
    expect(failed.evidenceChainTimeS).toBeGreaterThanOrEqual(validBefore);
    expect(await groupKinds(failed.paymentId)).toEqual(['SERVICE_FEE', 'REVERSAL']);
    expect(await balance(payer.address)).toBe(PING_PRICE);
  });
});

describe('the reconciler sweeps every open payment in turn', () => {
  it('with more open payments than one sweep takes, the next sweep goes on where the last stopped', async () => {
    const payers = [await newPayer(), await newPayer(), await newPayer()];
    const reconciler = stack.stack.gateway.reconciler!;
    await anvil.setAutomine(false);
    try {
      // Three settlements wait in the mempool: parked, and open for as long as nothing is mined.
      for (const payer of payers) {
        await expectPending(
          await paidPing(
            await signedPaymentHeader(
              await challengeFor('/ping_service'),
              payer,
              (await laterClockS()) + 200n,
            ),
          ),
        );
      }
      const open = await Promise.all(
        payers.map(async (payer) => (await paymentOf(payer.address)).paymentId),
      );
      const first = await reconciler.sweep(2);
      const second = await reconciler.sweep(2);
      expect(first.paymentIds.length).toBeLessThanOrEqual(2);
      expect(second.paymentIds.length).toBeLessThanOrEqual(2);
      expect([...first.paymentIds, ...second.paymentIds]).toEqual(expect.arrayContaining(open));
      for (const paymentId of open)
        expect((await getPayment(stack.db.pool, paymentId))!.state).toBe('PENDING');
    } finally {
      await anvil.setAutomine(true);
    }
    // Mined now: sweeps (wrapping round) book all three, each once.
    await anvil.mine({ blocks: 1 });
    for (let pass = 0; pass < 3; pass += 1) await reconciler.sweep(2);
    for (const payer of payers) expect((await paymentOf(payer.address)).state).toBe('SETTLED');
  });
});

describe('the books after every payment above', () => {
  it('trial balance zero per asset; on both chains the fee receiver holds exactly what the ledger says', async () => {
    const lines = await trialBalanceLines(stack);
    expect(lines.map((line) => line.asset)).toContain(`eip155:196|${token.toLowerCase()}`);
    for (const line of lines) expect(line).toMatchObject({ netAtomic: '0', balanced: true });
    const drift = await feeReceiverDrift(stack, devnet);
    expect(drift).toHaveLength(2);
    for (const chain of drift) expect(chain.onchainAtomic).toBe(chain.ledgerAtomic);
    expect(drift[0].ledgerAtomic).toBeGreaterThan(0n);
  });
});
