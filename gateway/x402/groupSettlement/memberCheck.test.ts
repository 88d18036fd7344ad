// MemberCheck against the official facilitator's verify, on a real anvil chain, real token and real
// signatures: for every kind of payment the paid path meets (good; a bad signature; signed by
// someone else; paying another recipient; the wrong amount; expired, expiring within the margin,
// not yet valid; a payer without balance; a nonce already used; another network; a Permit2 or v1
// payload), it passes exactly the ones the facilitator finds valid, so the group path gives the
// facilitator's own answer to every other.
import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import type { Address, Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type LocalAccount } from 'viem/accounts';
import { type DevnetChains, startDevnetChains } from '../../../devnet/chains';
import { createChainPublicClient, createChainWalletClient } from '../../../platform/chain/clients';
import {
  createFacilitatorSigner,
  relayerAccount,
  withChainReads,
} from '../../../platform/chain/facilitatorSigner';
import { mintedPayer } from '../../../test/support/devnetPayers';
import {
  signTransferWithAuthorization,
  submitTransferWithAuthorization,
} from '../../../platform/chain/tokens';
import { groupAuthorizationOf } from './groupSettler';
import { MemberCheck } from './memberCheck';

const POLLING = { pollingIntervalMs: 20 };
const PRICE = 50_000n;

let devnet: DevnetChains;
let facilitator: x402Facilitator;
let check: MemberCheck;
/** The same check on a chain where the token's DOMAIN_SEPARATOR cannot be read (the node refuses that read). */
let blindCheck: MemberCheck;
let domainReadsRefused = 0;

beforeAll(async () => {
  devnet = await startDevnetChains({ dataDir: null });
  const funding = devnet.info.chains.funding;
  const account = relayerAccount(devnet.keys.relayer.exportPrivateKey());
  const wallet = withChainReads(createChainWalletClient(funding, account, POLLING));
  const signer = createFacilitatorSigner(wallet, account.address, {
    confirmationTimeoutMs: 10_000,
    knownContracts: [funding.token.address],
  });
  facilitator = new x402Facilitator();
  registerExactEvmScheme(facilitator, { signer, networks: network(), simulateInSettle: true });
  // The signer's reads, and the simulation's eth_call on the same wallet, as the rail gives them.
  const call = (args: { to: `0x${string}`; data: `0x${string}` }) => wallet.call(args);
  check = new MemberCheck(
    {
      getCode: (args) => signer.getCode(args),
      readContract: (args) => signer.readContract(args as never),
      call,
    },
    funding.chainId,
  );
  blindCheck = new MemberCheck(
    {
      getCode: (args) => signer.getCode(args),
      call,
      readContract: (args) => {
        if (args.functionName !== 'DOMAIN_SEPARATOR') return signer.readContract(args as never);
        domainReadsRefused += 1;
        return Promise.reject(new Error('execution reverted'));
      },
    },
    funding.chainId,
  );
}, 120_000);

afterAll(async () => {
  await devnet?.stop();
});

function network(): `eip155:${number}` {
  return `eip155:${devnet.info.chains.funding.chainId}`;
}

function chain() {
  const funding = devnet.info.chains.funding;
  return {
    funding,
    publicClient: createChainPublicClient(funding, POLLING),
    token: funding.token.address,
  };
}

/** A fresh payer holding `amount` of the funding token (none: a key that never held any). */
async function payerWith(amount: bigint): Promise<LocalAccount> {
  return amount > 0n ? mintedPayer(devnet, amount) : privateKeyToAccount(generatePrivateKey());
}

const payTo = (): Address => devnet.keys.feeReceiver.address;

async function requirements(): Promise<PaymentRequirements> {
  const { publicClient, token } = chain();
  const probe = await signTransferWithAuthorization({
    publicClient,
    token,
    signer: privateKeyToAccount(generatePrivateKey()),
    to: payTo(),
    valueAtomic: 1n,
    validBeforeUnixS: 1n,
  });
  return {
    scheme: 'exact',
    network: network(),
    asset: token,
    amount: PRICE.toString(),
    payTo: payTo(),
    maxTimeoutSeconds: 60,
    extra: { name: probe.domain.name, version: probe.domain.version },
  };
}

interface Signing {
  readonly signer?: LocalAccount;
  readonly to?: Address;
  readonly value?: bigint;
  readonly validAfter?: bigint;
  readonly validBefore?: bigint;
  readonly nonce?: Hex;
}

async function payment(
  payer: LocalAccount,
  accepted: PaymentRequirements,
  signing: Signing = {},
): Promise<PaymentPayload> {
  const { publicClient, token } = chain();
  const nowS = BigInt(Math.floor(Date.now() / 1000));
  const signed = await signTransferWithAuthorization({
    publicClient,
    token,
    signer: signing.signer ?? payer,
    to: signing.to ?? payTo(),
    valueAtomic: signing.value ?? PRICE,
    validAfterUnixS: signing.validAfter ?? 0n,
    validBeforeUnixS: signing.validBefore ?? nowS + 300n,
    ...(signing.nonce ? { nonce: signing.nonce } : {}),
  });
  const m = signed.message;
  return {
    x402Version: 2,
    resource: {
      url: 'http://127.0.0.1/v1/ping',
      description: 'ping',
      mimeType: 'application/json',
    },
    accepted,
    payload: {
      authorization: {
        from: payer.address,
        to: m.to,
        value: m.value.toString(),
        validAfter: m.validAfter.toString(),
        validBefore: m.validBefore.toString(),
        nonce: m.nonce,
      },
      signature: signed.signature,
    },
  };
}

/** Both verdicts for one payment: the check's and the facilitator's. */
async function verdicts(payload: PaymentPayload, required: PaymentRequirements) {
  const authorization = groupAuthorizationOf(payload);
  if (!authorization) throw new Error('the group path would not carry this payload');
  const [passes, official] = await Promise.all([
    check.passes(payload, required, authorization),
    facilitator.verify(payload, required),
  ]);
  return { passes, official };
}

describe('MemberCheck passes exactly what the official facilitator verifies', () => {
  it('passes a good payment, which the facilitator finds valid', async () => {
    const required = await requirements();
    const payer = await payerWith(PRICE);
    const { passes, official } = await verdicts(await payment(payer, required), required);
    expect(official.isValid).toBe(true);
    expect(passes).toBe(true);
  });

  it.each([
    [
      'signed by another key',
      async (payer: LocalAccount) => ({ signer: await payerWith(0n), payer }),
    ],
    ['paying another recipient', async (payer: LocalAccount) => ({ to: payer.address })],
    ['for another amount', async () => ({ value: PRICE + 1n })],
    ['already expired', async () => ({ validBefore: BigInt(Math.floor(Date.now() / 1000)) - 1n })],
    [
      'expiring within the 6 s margin',
      async () => ({ validBefore: BigInt(Math.floor(Date.now() / 1000)) + 3n }),
    ],
    ['not yet valid', async () => ({ validAfter: BigInt(Math.floor(Date.now() / 1000)) + 120n })],
  ] as const)('does not pass a payment %s; the facilitator refuses it', async (_name, make) => {
    const required = await requirements();
    // Enough for the other amount too, so only the check under test can refuse it.
    const payer = await payerWith(PRICE * 2n);
    const signing = (await make(payer)) as Signing;
    const { passes, official } = await verdicts(await payment(payer, required, signing), required);
    expect(official.isValid).toBe(false);
    expect(passes).toBe(false);
  });

  it('does not pass a payer without the balance, nor a nonce already used', async () => {
    const required = await requirements();
    const broke = await payerWith(PRICE - 1n);
    const poor = await verdicts(await payment(broke, required), required);
    expect(poor.official.isValid).toBe(false);
    expect(poor.passes).toBe(false);

    const payer = await payerWith(PRICE * 2n);
    const { funding, publicClient, token } = chain();
    const used = await signTransferWithAuthorization({
      publicClient,
      token,
      signer: payer,
      to: payTo(),
      valueAtomic: PRICE,
      validBeforeUnixS: BigInt(Math.floor(Date.now() / 1000)) + 300n,
    });
    const relayer = createChainWalletClient(funding, devnet.keys.relayer.account, POLLING);
    await submitTransferWithAuthorization({ publicClient, relayer, authorization: used });
    const again = await verdicts(
      await payment(payer, required, { nonce: used.message.nonce }),
      required,
    );
    expect(again.official.isValid).toBe(false);
    expect(again.passes).toBe(false);
  });

  it('does not pass a signature whose bytes were altered', async () => {
    const required = await requirements();
    const payer = await payerWith(PRICE);
    const good = await payment(payer, required);
    const raw = good.payload as { signature: Hex };
    const flipped =
      `${raw.signature.slice(0, 10)}${raw.signature[10] === 'a' ? 'b' : 'a'}${raw.signature.slice(11)}` as Hex;
    const tampered = { ...good, payload: { ...good.payload, signature: flipped } };
    const { passes, official } = await verdicts(tampered, required);
    expect(official.isValid).toBe(false);
    expect(passes).toBe(false);
  });

  it('offered a domain the token does not sign under, checks the signature itself: passes nothing the facilitator refuses', async () => {
    const required = await requirements();
    const misnamed = { ...required, extra: { ...required.extra, name: 'Not the token' } };
    const payer = await payerWith(PRICE * 2n);
    // Signed for the token's own domain: the token would take it, the offered domain does not match.
    const forToken = await verdicts(await payment(payer, misnamed), misnamed);
    expect(forToken.official.isValid).toBe(false);
    expect(forToken.passes).toBe(false);
    // …while under the requirements that name the token's domain, the same kind of payment passes.
    const right = await verdicts(await payment(payer, required), required);
    expect(right.official.isValid).toBe(true);
    expect(right.passes).toBe(true);
  });

  it('without the token’s domain separator, recovers the signer itself: a good payment passes, another key’s does not', async () => {
    const required = await requirements();
    const payer = await payerWith(PRICE * 2n);
    const good = await payment(payer, required);
    const before = domainReadsRefused;
    expect(await blindCheck.passes(good, required, groupAuthorizationOf(good)!)).toBe(true);
    expect(domainReadsRefused).toBe(before + 1);
    const other = await payment(payer, required, { signer: await payerWith(0n) });
    expect(await blindCheck.passes(other, required, groupAuthorizationOf(other)!)).toBe(false);
    // A failed read is not remembered: the next payment asks again.
    expect(domainReadsRefused).toBe(before + 2);
  });

  it('leaves to the facilitator what it was not built for: another network, x402 v1, a Permit2 payload', async () => {
    const required = await requirements();
    const payer = await payerWith(PRICE);
    const good = await payment(payer, required);
    const authorization = groupAuthorizationOf(good)!;
    const otherNetwork = { ...required, network: 'eip155:1' as const };
    expect(
      await check.passes({ ...good, accepted: otherNetwork }, otherNetwork, authorization),
    ).toBe(false);
    expect(await check.passes({ ...good, x402Version: 1 }, required, authorization)).toBe(false);
    const permit2 = { ...good, payload: { ...good.payload, permit2Authorization: {} } };
    expect(await check.passes(permit2, required, authorization)).toBe(false);
    // …while the same payment as sent passes, so each refusal above is the change's doing.
    expect(await check.passes(good, required, authorization)).toBe(true);
  });
});

describe('MemberCheck.inWindow: whether a check made a moment ago still stands', () => {
  const NOW = 1_800_000_000n;
  const clocked = new MemberCheck(
    {
      getCode: () => Promise.reject(new Error('no chain here')),
      call: () => Promise.reject(new Error('no chain here')),
      readContract: () => Promise.reject(new Error('no chain here')),
    },
    196,
    () => NOW,
  );
  const window = (validAfter: bigint, validBefore: bigint) =>
    ({ validAfter, validBefore }) as Parameters<MemberCheck['inWindow']>[0];

  it('holds while validBefore is at least 6 s ahead and validAfter has come, as the facilitator bounds them', () => {
    expect(clocked.inWindow(window(0n, NOW + 300n))).toBe(true);
    expect(clocked.inWindow(window(NOW, NOW + 6n))).toBe(true);
    expect(clocked.inWindow(window(0n, NOW + 5n))).toBe(false);
    expect(clocked.inWindow(window(NOW + 1n, NOW + 300n))).toBe(false);
  });
});
