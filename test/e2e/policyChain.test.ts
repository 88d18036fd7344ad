// Policies and the funding chain, end to end on the devnet (anvil eip155:196 with the deployed
// PolicyRegistry): an owner requests the registration calldata, sends it from their own key, and
// the service records the confirmed event; a hash that no longer matches is refused; a contract
// wallet (ERC-1271) signs in through the chain.
import solc from 'solc';
import { type Address, type Hex, parseEther } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { policyRegistryAbi } from '../../contracts/artifacts/abis';
import { policyDocument } from '../../core/test-support/spend-fixtures';
import { type DevnetChains, startDevnetChains } from '../../devnet/chains';
import {
  createAnvilTestClient,
  createChainPublicClient,
  createChainWalletClient,
  type ChainPublicClient,
} from '../../platform/chain/clients';
import { deployArtifact } from '../../platform/chain/deploy';
import { postSignIn, requestNonce, signIn, signSignInMessage } from '../support/siwe';
import { graphql, startTestStack, type TestStack } from '../support/stack';

const POLLING = { pollingIntervalMs: 20 };
const owner = privateKeyToAccount(generatePrivateKey());
const otherOwner = privateKeyToAccount(generatePrivateKey());

const CREATE = 'mutation ($p: JSONObject!) { createPolicy(policy: $p) { id policyHash } }';
const UPDATE =
  'mutation ($id: ID!, $p: JSONObject!) { updatePolicy(policyId: $id, policy: $p) { id version policyHash } }';
const REQUEST =
  'mutation ($id: ID!) { requestPolicyRegistration(policyId: $id) { policyId chainId network from to data value function ownerNonce policyHash expiresAtUnix } }';
const SYNC =
  'mutation ($id: ID!, $tx: String!) { syncPolicyRegistration(policyId: $id, txHash: $tx) { id registration { chainId txHash blockNumber event policyHash version upToDate } } }';

let devnet: DevnetChains;
let stack: TestStack;
let publicClient: ChainPublicClient;
let ownerSession: string;

function fundingEndpoint() {
  return devnet.info.chains.funding;
}

async function ok(query: string, variables: Record<string, unknown>, token: string) {
  const { body } = await graphql(stack.url, query, variables, token);
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

async function sendFrom(
  account: PrivateKeyAccount,
  request: { to: string; data: string; value: string },
): Promise<{ txHash: Hex; blockNumber: bigint }> {
  const wallet = createChainWalletClient(fundingEndpoint(), account, POLLING);
  const txHash = await wallet.sendTransaction({
    to: request.to as Address,
    data: request.data as Hex,
    value: BigInt(request.value),
  });
  const receipt = await publicClient.waitForTransactionReceipt({ hash: txHash });
  return { txHash, blockNumber: receipt.blockNumber };
}

async function syncRest(policyId: string, txHash: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${stack.url}/sync_policy_registration`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.adminToken}` },
    body: JSON.stringify({ policyId, txHash }),
  });
  return { status: response.status, body: await response.json() };
}

async function createOwnedPolicy(
  overrides: Record<string, unknown> = {},
): Promise<{ id: string; policyHash: string }> {
  return (
    await ok(CREATE, { p: policyDocument({ owner: owner.address, ...overrides }) }, ownerSession)
  ).createPolicy;
}

beforeAll(async () => {
  devnet = await startDevnetChains({ dataDir: null });
  const funding = fundingEndpoint();
  publicClient = createChainPublicClient(funding, POLLING);
  const testClient = createAnvilTestClient(funding);
  for (const account of [owner, otherOwner])
    await testClient.setBalance({ address: account.address, value: parseEther('10') });
  stack = await startTestStack({
    chains: {
      funding: {
        chainId: funding.chainId,
        rpcUrl: funding.rpcUrl,
        policyRegistry: devnet.info.contracts.policyRegistry,
      },
    },
  });
  ownerSession = await signIn(stack.url, owner);
});

afterAll(async () => {
  await stack?.stop();
  await devnet?.stop();
});

describe('on-chain registration', () => {
  it('round trip: calldata for the owner’s wallet, a confirmed PolicyRegistered event, recorded with chain, tx and block', async () => {
    const policy = await createOwnedPolicy();
    const request = (await ok(REQUEST, { id: policy.id }, ownerSession)).requestPolicyRegistration;
    expect(request).toEqual({
      policyId: policy.id,
      chainId: 196,
      network: 'eip155:196',
      from: owner.address,
      to: devnet.info.contracts.policyRegistry,
      data: expect.stringMatching(/^0x[0-9a-f]+$/),
      value: '0',
      function: 'register',
      ownerNonce: '1',
      policyHash: policy.policyHash,
      expiresAtUnix: String(Date.UTC(2027, 11, 31) / 1000),
    });

    const { txHash, blockNumber } = await sendFrom(owner, request);
    const synced = await syncRest(policy.id, txHash);
    expect(synced.status).toBe(200);
    expect(synced.body.registration).toEqual({
      chainId: 196,
      network: 'eip155:196',
      registry: devnet.info.contracts.policyRegistry!.toLowerCase(),
      txHash,
      blockNumber: blockNumber.toString(),
      event: 'PolicyRegistered',
      policyHash: policy.policyHash,
      version: 1,
      upToDate: true,
      recordedAt: expect.any(String),
    });
    const onChain = await publicClient.readContract({
      address: devnet.info.contracts.policyRegistry!,
      abi: policyRegistryAbi,
      functionName: 'recordOf',
      args: [BigInt(policy.id)],
    });
    expect(onChain).toMatchObject({ owner: owner.address, policyHash: policy.policyHash });

    // Syncing the same transaction again (here by the owner, through GraphQL) records nothing new.
    const again = (await ok(SYNC, { id: policy.id, tx: txHash }, ownerSession))
      .syncPolicyRegistration;
    expect(again.registration).toMatchObject({ txHash, event: 'PolicyRegistered', upToDate: true });
    const rows = await stack.db.pool.query(
      'SELECT count(*)::int AS n FROM policy.registrations WHERE policy_id = $1',
      [policy.id],
    );
    expect(rows.rows[0].n).toBe(1);
  });

  it('refuses a hash that is no longer the stored one with 409 RULES_HASH_MISMATCH, then records the update', async () => {
    const policy = await createOwnedPolicy();
    const stale = (await ok(REQUEST, { id: policy.id }, ownerSession)).requestPolicyRegistration;
    const updated = (
      await ok(
        UPDATE,
        { id: policy.id, p: policyDocument({ owner: owner.address, dailyBudget: '30.00' }) },
        ownerSession,
      )
    ).updatePolicy;
    const { txHash } = await sendFrom(owner, stale);

    const refused = await syncRest(policy.id, txHash);
    expect([refused.status, refused.body.code]).toEqual([409, 'RULES_HASH_MISMATCH']);
    expect(refused.body.details).toEqual({
      onChainPolicyHash: policy.policyHash,
      storedPolicyHash: updated.policyHash,
      version: 2,
    });
    const unrecorded = await graphql(
      stack.url,
      'query ($id: ID!) { policy(id: $id) { registration { txHash } } }',
      { id: policy.id },
      ownerSession,
    );
    expect(unrecorded.body.data.policy.registration).toBeNull();

    const fresh = (await ok(REQUEST, { id: policy.id }, ownerSession)).requestPolicyRegistration;
    expect([fresh.function, fresh.policyHash]).toEqual(['update', updated.policyHash]);
    const sent = await sendFrom(owner, fresh);
    const synced = await syncRest(policy.id, sent.txHash);
    expect(synced.status).toBe(200);
    expect(synced.body.registration).toMatchObject({
      event: 'PolicyUpdated',
      policyHash: updated.policyHash,
      version: 2,
      upToDate: true,
    });

    // A later update leaves the chain behind, and the registration says so.
    await ok(
      UPDATE,
      { id: policy.id, p: policyDocument({ owner: owner.address, dailyBudget: '31.00' }) },
      ownerSession,
    );
    const behind = await graphql(
      stack.url,
      'query ($id: ID!) { policy(id: $id) { registration { upToDate version } } }',
      { id: policy.id },
      ownerSession,
    );
    expect(behind.body.data.policy.registration).toEqual({ upToDate: false, version: 2 });
  });

  it('waits for confirmation: an unmined transaction is 409 POLICY_REGISTRATION_PENDING (retryable)', async () => {
    const policy = await createOwnedPolicy();
    const request = (await ok(REQUEST, { id: policy.id }, ownerSession)).requestPolicyRegistration;
    const testClient = createAnvilTestClient(fundingEndpoint());
    await testClient.setAutomine(false);
    try {
      const wallet = createChainWalletClient(fundingEndpoint(), owner, POLLING);
      const txHash = await wallet.sendTransaction({
        to: request.to,
        data: request.data,
        value: 0n,
      });
      const pending = await syncRest(policy.id, txHash);
      expect([pending.status, pending.body.code, pending.body.retryable]).toEqual([
        409,
        'POLICY_REGISTRATION_PENDING',
        true,
      ]);
      await testClient.mine({ blocks: 1 });
      await publicClient.waitForTransactionReceipt({ hash: txHash });
      expect((await syncRest(policy.id, txHash)).status).toBe(200);
    } finally {
      await testClient.setAutomine(true);
    }
  });

  it('refuses a transaction without this policy’s event with 409 POLICY_REGISTRATION_INVALID', async () => {
    const first = await createOwnedPolicy();
    const second = await createOwnedPolicy();
    const { txHash } = await sendFrom(
      owner,
      (await ok(REQUEST, { id: first.id }, ownerSession)).requestPolicyRegistration,
    );
    const wrong = await syncRest(second.id, txHash);
    expect([wrong.status, wrong.body.code]).toEqual([409, 'POLICY_REGISTRATION_INVALID']);
    const malformed = await syncRest(second.id, '0x1234');
    expect([malformed.status, malformed.body.code]).toEqual([400, 'REQUEST_INVALID']);
  });

  it('lets another owner neither request nor sync this owner’s registration', async () => {
    const policy = await createOwnedPolicy();
    const intruder = await signIn(stack.url, otherOwner);
    const request = await graphql(stack.url, REQUEST, { id: policy.id }, intruder);
    expect(request.body.errors?.[0].extensions?.code).toBe('POLICY_NOT_FOUND');
    const sync = await graphql(
      stack.url,
      SYNC,
      { id: policy.id, tx: `0x${'11'.repeat(32)}` },
      intruder,
    );
    expect(sync.body.errors?.[0].extensions?.code).toBe('POLICY_NOT_FOUND');
    const anonymous = await graphql(stack.url, REQUEST, { id: policy.id });
    expect(anonymous.body.errors?.[0].extensions?.code).toBe('AUTH_REQUIRED');
  });
});

/** A minimal ERC-1271 wallet: a signature is valid when its key signer is the wallet's owner. */
const WALLET_SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;
contract OwnedWallet {
    address public immutable owner;
    constructor(address owner_) { owner = owner_; }
    function isValidSignature(bytes32 hash, bytes memory signature) external view returns (bytes4) {
        if (signature.length != 65) return 0xffffffff;
        bytes32 r; bytes32 s; uint8 v;
        assembly { r := mload(add(signature, 32)) s := mload(add(signature, 64)) v := byte(0, mload(add(signature, 96))) }
        return ecrecover(hash, v, r, s) == owner ? bytes4(0x1626ba7e) : bytes4(0xffffffff);
    }
}`;

function compileWallet(): { abi: readonly unknown[]; bytecode: Hex } {
  const input = {
    language: 'Solidity',
    sources: { 'OwnedWallet.sol': { content: WALLET_SOURCE } },
    settings: {
      evmVersion: 'cancun',
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input)));
  const contract = output.contracts['OwnedWallet.sol'].OwnedWallet;
  return { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
}

describe('contract-wallet sign-in (ERC-1271)', () => {
  it('signs a contract wallet in through the funding chain, and refuses it where no chain is configured', async () => {
    const { abi, bytecode } = compileWallet();
    const { address: wallet } = await deployArtifact({
      publicClient,
      walletClient: createChainWalletClient(fundingEndpoint(), owner, POLLING),
      contractName: 'OwnedWallet',
      abi: abi as never,
      bytecode,
      args: [owner.address] as never,
    });
    // The owner key signs for the wallet: the message names the wallet, the signature is the key's.
    const asWallet = { ...owner, address: wallet } as unknown as PrivateKeyAccount;
    const signed = await signSignInMessage(asWallet, await requestNonce(stack.url));
    const answer = await postSignIn(stack.url, '/owner/auth/verify', signed);
    expect([answer.status, answer.body.session, answer.body.address]).toEqual([
      200,
      'owner',
      wallet.toLowerCase(),
    ]);

    const chainless = await startTestStack();
    try {
      const refused = await postSignIn(
        chainless.url,
        '/owner/auth/verify',
        await signSignInMessage(asWallet, await requestNonce(chainless.url)),
      );
      expect([refused.status, refused.body.code]).toEqual([401, 'SIWE_INVALID']);
    } finally {
      await chainless.stop();
    }
  });
});
