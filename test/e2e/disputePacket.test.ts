// POST /generate_dispute_packet end to end on the devnet: an escalated purchase approved by its
// owner, funded with the official x402 client, paid to the real domains merchant, verified over
// RDAP and anchored in a ReceiptAnchor batch; then its dispute packet, bought at $0.50 with the
// official client. The packet is checked without trusting the service: its digest recomputed (the
// `canonicalize` package and viem's keccak256), the receipt's inclusion proof walked to the root and
// the root found in the contract's Anchored event and batchOf, both legs' tx hashes and blocks
// matched against the chains' Transfer events, the intentHash recomputed from the SpendIntent,
// every ledger group summing to zero, and no string in it hashing to the approval code's sha256.
// Refusals (bad body, no credential, someone else's or an unknown intent) come before any 402.
import { createHash } from 'node:crypto';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import canonicalize from 'canonicalize';
import { bytesToHex, type Hex, keccak256, parseEventLogs, toBytes } from 'viem';
import { receiptAnchorAbi } from '../../contracts/artifacts/abis';
import {
  leafHash,
  proofFromHex,
  receiptLeafData,
  receiptMerkleHash,
  rootFromInclusionProof,
} from '../../core/canon/merkle';
import { validateSpendIntent } from '../../core/validation/intent';
import { newConsumer, type TestConsumer } from '../support/consumers';
import { startConsumerWorld, type ConsumerWorld } from '../support/consumerWorld';
import { postJson } from '../support/stack';
import { createIntent, fundAndExecute, fundingFetch, untilState } from '../support/purchases';
import { transferIn } from '../support/transfers';

const ROUTE = '/generate_dispute_packet';

let world: ConsumerWorld;
let buyer: TestConsumer;
let intentId: string;
let intentHash: string;

/** Escalated → approved by the owner's route → funded (x402) → executed → COMPLETED → anchored. */
async function purchase(): Promise<void> {
  const created = await createIntent(world, buyer, `dispute-${Date.now().toString(36)}.test`);
  expect(created.nextAction).toBe('AWAIT_APPROVAL');
  intentId = created.intent.intentId;
  intentHash = created.intent.intentHash;
  const approved = await postJson(
    world.stack.url,
    `/consumer/intents/${intentId}/approve`,
    { decision: 'APPROVE', intentHash },
    buyer.owner,
  );
  expect(approved.status).toBe(200);
  await fundAndExecute(world, buyer, intentId);
  await untilState(world, intentId, 'COMPLETED');
  const round = await world.stack.stack.anchoring!.runOnce();
  expect(round).toMatchObject({ ran: true, failed: 0 });
}

beforeAll(async () => {
  world = await startConsumerWorld({ rdap: true, anchoring: { batchSize: 100, batchSeconds: 0 } });
  buyer = await newConsumer(world.stack, world.devnet, {
    mintAtomic: 10_000_000n,
    policy: { escalateAbove: '0.05' },
  });
  await purchase();
}, 120_000);

afterAll(async () => {
  await world?.stop();
});

/** The route asked with plain fetch (no payment); the answer and whether a payment was offered. */
async function ask(body: unknown, bearer?: string) {
  const response = await fetch(`${world.stack.url}${ROUTE}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
    },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    offered: response.headers.get('payment-required'),
    body: JSON.parse(await response.text()),
  };
}

/** The route bought with the official client, paid by `payer`, as `bearer`. */
async function buy(body: unknown, bearer: string, payer = buyer.account) {
  const response = await fundingFetch(world, payer)(`${world.stack.url}${ROUTE}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
    body: JSON.stringify(body),
  });
  // Parsed in this realm: JCS accepts plain objects only.
  return { status: response.status, body: JSON.parse(await response.text()) };
}

const digestOf = (document: Record<string, unknown>, leftOut: string[]): Hex => {
  const covered = Object.fromEntries(
    Object.entries(document).filter(([key]) => !leftOut.includes(key)),
  );
  return keccak256(toBytes(canonicalize(covered)!));
};

describe('refused before any 402: nothing is offered, nothing is charged', () => {
  test('a malformed body is 400 REQUEST_INVALID with the field', async () => {
    const bodies: [unknown, string][] = [
      [{}, 'intentId'],
      [{ intentId: 'ci_NOT-AN-ID' }, 'intentId'],
      [{ intentHash: '0x1234' }, 'intentHash'],
      [{ intentId, intentHash }, 'intentHash'],
      [{ intentId, extra: 1 }, 'extra'],
    ];
    for (const [body, field] of bodies) {
      const answer = await ask(body, buyer.session);
      expect(answer).toMatchObject({ status: 400, offered: null });
      expect(answer.body.code).toBe('REQUEST_INVALID');
      expect(answer.body.details.map((detail: { field: string }) => detail.field)).toContain(field);
    }
  });

  test('no credential is 401 AUTH_REQUIRED', async () => {
    const answer = await ask({ intentId });
    expect(answer).toMatchObject({ status: 401, offered: null, body: { code: 'AUTH_REQUIRED' } });
  });

  test('an unknown intent is 404 CONSUMER_INTENT_NOT_FOUND, by id and by hash', async () => {
    for (const body of [
      { intentId: `ci_${'0'.repeat(24)}` },
      { intentHash: `0x${'e'.repeat(64)}` },
    ]) {
      const answer = await ask(body, buyer.session);
      expect(answer).toMatchObject({ status: 404, offered: null });
      expect(answer.body.code).toBe('CONSUMER_INTENT_NOT_FOUND');
    }
  });

  test('another owner and another policy’s consumer session get the same 404, and no data', async () => {
    const stranger = await newConsumer(world.stack, world.devnet);
    for (const bearer of [stranger.owner, stranger.session]) {
      for (const body of [{ intentId }, { intentHash }]) {
        const answer = await ask(body, bearer);
        expect(answer).toMatchObject({ status: 404, offered: null });
        expect(answer.body.code).toBe('CONSUMER_INTENT_NOT_FOUND');
        const text = JSON.stringify(answer.body);
        for (const secret of [buyer.policy.policyId, buyer.account.address.toLowerCase(), 'txHash'])
          expect(text).not.toContain(secret);
      }
    }
  });
});

test('unpaid, the intent’s own caller is offered the $0.50 x402 challenge with body {}', async () => {
  const answer = await ask({ intentId }, buyer.session);
  expect(answer.status).toBe(402);
  expect(answer.body).toEqual({});
  const required = decodePaymentRequiredHeader(answer.offered!);
  expect(required.accepts).toHaveLength(1);
  expect(required.accepts[0]).toMatchObject({
    scheme: 'exact',
    network: 'eip155:196',
    amount: '500000',
  });
  expect(required.accepts[0]!.asset.toLowerCase()).toBe(world.rails.funding.token.toLowerCase());
});

describe('the packet of a completed, escalated, anchored purchase', () => {
  let packet: any;

  beforeAll(async () => {
    const answer = await buy({ intentId }, buyer.session);
    expect(answer.status).toBe(200);
    packet = answer.body;
  }, 60_000);

  test('its digest recomputes: keccak256 of the JCS of the packet without integrity', () => {
    expect(packet.packet).toBe('spend-control/dispute-packet/v1');
    expect(packet.integrity.digest).toBe(digestOf(packet, ['integrity']));
  });

  test('intent, hash, policy version and hash, and the full decision trace', () => {
    expect(packet.intent).toMatchObject({ intentId, intentHash, state: 'COMPLETED' });
    const recomputed = validateSpendIntent(
      packet.intent.spendIntent,
      new Date(packet.intent.createdAt),
    );
    expect(recomputed.ok && recomputed.intent.intentHash).toBe(intentHash);
    expect(packet.policy).toEqual({
      policyId: buyer.policy.policyId,
      policyHash: buyer.policy.policyHash,
      policyVersion: 1,
    });
    expect(packet.decision.decision).toBe('APPROVED');
    expect(packet.decision.engine.ruleCount).toBe(14);
    expect(packet.decision.ruleTrace).toHaveLength(14);
    const threshold = packet.decision.ruleTrace.find(
      (entry: { rule: string }) => entry.rule === 'escalate.aboveThreshold',
    );
    expect(threshold).toMatchObject({
      result: 'PASS',
      note: `OWNER_APPROVED:${packet.approval.pollRef}`,
    });
  });

  test('the approval names who, when and the channel kind, and no string in the packet is its code', async () => {
    expect(packet.approval).toMatchObject({
      state: 'APPROVED',
      escalatedAs: 'ESCALATED_THRESHOLD',
      channel: 'dashboard',
      // The deciding actor as the service records it: the owner's session, by address.
      decidedBy: `owner:${buyer.account.address.toLowerCase()}`,
      decidedAt: expect.any(String),
    });
    const stored = await world.stack.db.pool.query<{ code_sha256: Buffer }>(
      'SELECT code_sha256 FROM policy.escalations WHERE poll_ref = $1',
      [packet.approval.pollRef],
    );
    const codeDigest = stored.rows[0]!.code_sha256.toString('hex');
    const text = JSON.stringify(packet);
    const candidates = text.match(/[0-9a-fA-F]{24,}/g) ?? [];
    for (const candidate of candidates)
      for (let start = 0; start + 24 <= candidate.length; start += 1) {
        const piece = candidate.slice(start, start + 24).toLowerCase();
        expect(createHash('sha256').update(piece).digest('hex')).not.toBe(codeDigest);
      }
    expect(text).not.toContain(codeDigest);
    expect(text).not.toMatch(/"(code|codeSha256|code_sha256|replyCode)"/);
  });

  test('both legs match the chains’ Transfer events: tx hash, parties, amount, block', async () => {
    const { funding, settlement } = packet.paymentLegs;
    expect(
      await transferIn(world.fundingChain, world.rails.funding.token, funding.txHash, {
        withBlock: true,
      }),
    ).toEqual({
      from: buyer.account.address.toLowerCase(),
      to: world.rails.funding.treasury.toLowerCase(),
      value: funding.amount,
      blockNumber: funding.blockNumber,
    });
    expect(
      await transferIn(world.settlementChain, world.rails.settlement.token, settlement.txHash, {
        withBlock: true,
      }),
    ).toEqual({
      from: world.rails.settlement.treasury.toLowerCase(),
      to: world.merchant.payTo.toLowerCase(),
      value: settlement.amount,
      blockNumber: settlement.blockNumber,
    });
  });

  test('the merchant’s word and the service’s finding, apart', () => {
    expect(packet.providerAttested).toMatchObject({
      status: 'ATTESTED',
      fields: { available: true },
    });
    expect(packet.serviceVerified).toMatchObject({ verified: true });
    expect(packet.receipt.providerAttested).toEqual(packet.providerAttested);
  });

  test('the receipt’s anchor proof leads to a root the ReceiptAnchor contract announced and holds', async () => {
    const { receipt } = packet;
    const receiptDigest = digestOf(receipt, ['integrity', 'anchor']);
    expect(receiptDigest).toBe(receipt.integrity.digest);
    const { anchor } = receipt;
    expect(anchor.state).toBe('ANCHORED');
    const leaf = leafHash(receiptMerkleHash, receiptLeafData(anchor.receiptId, receiptDigest));
    const walked = rootFromInclusionProof(
      receiptMerkleHash,
      leaf,
      anchor.proof.index,
      anchor.proof.treeSize,
      proofFromHex(anchor.proof.path),
    );
    expect(walked && bytesToHex(walked)).toBe(anchor.batchRoot);
    const tx = await world.fundingChain.getTransactionReceipt({ hash: anchor.txHash });
    expect(Number(tx.blockNumber)).toBe(anchor.blockNumber);
    const announced = parseEventLogs({
      abi: receiptAnchorAbi,
      eventName: 'Anchored',
      logs: tx.logs,
    }).filter((log) => log.address.toLowerCase() === anchor.contract);
    expect(announced.map((log) => [log.args.root, Number(log.args.count)])).toEqual([
      [anchor.batchRoot, anchor.proof.treeSize],
    ]);
    const batch = await world.fundingChain.readContract({
      address: anchor.contract,
      abi: receiptAnchorAbi,
      functionName: 'batchOf',
      args: [anchor.batchRoot],
    });
    expect(batch.count).toBe(anchor.proof.treeSize);
  });

  test('the ledger groups of the intent, each with entries summing to zero, legs among them', () => {
    const groups = packet.ledger.groups as {
      groupId: string;
      kind: string;
      entries: { amount: string }[];
    }[];
    expect(groups.map((group) => group.kind)).toEqual(
      expect.arrayContaining(['FUNDING', 'SETTLEMENT', 'RECOGNITION']),
    );
    for (const group of groups) {
      expect(group.entries.length).toBeGreaterThanOrEqual(2);
      expect(group.entries.reduce((sum, entry) => sum + BigInt(entry.amount), 0n)).toBe(0n);
    }
    const ids = groups.map((group) => group.groupId);
    expect(ids).toContain(packet.paymentLegs.funding.ledgerGroupId);
    expect(ids).toContain(packet.paymentLegs.settlement.ledgerGroupId);
  });

  test('the owner by intentHash and an admin get the same evidence', async () => {
    const byOwner = await buy({ intentHash }, buyer.owner);
    expect(byOwner.status).toBe(200);
    const byAdmin = await buy({ intentId }, world.stack.adminToken);
    expect(byAdmin.status).toBe(200);
    for (const other of [byOwner.body, byAdmin.body]) {
      expect(other.integrity.digest).toBe(digestOf(other, ['integrity']));
      const { generatedAt: _a, integrity: _b, ...rest } = other;
      const { generatedAt: _c, integrity: _d, ...mine } = packet;
      expect(rest).toEqual(mine);
    }
  });
});
