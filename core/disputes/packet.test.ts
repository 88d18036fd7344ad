// The dispute packet builder: the approval is picked field by field (an escalation record stuffed
// with a reply code, its hash and other extras leaks none of them), both legs carry their block and
// ledger group, the merchant's word and the service's finding stay apart, and the digest is
// recomputed with JCS and keccak256 implementations other than the service's (the `canonicalize`
// package and viem's keccak256); one changed value changes it.
import canonicalize from 'canonicalize';
import { keccak256, toBytes } from 'viem';
import {
  buildDisputePacket,
  DISPUTE_PACKET_KIND,
  type DisputeEscalationSource,
  disputePacketDigest,
  type DisputePacketSource,
} from './packet';

const INTENT_ID = 'ci_' + '0123456789abcdef01234567';
const INTENT_HASH = '0x' + 'ab'.repeat(32);
const REPLY_CODE = 'c0dec0dec0dec0dec0dec0de';
const FUNDING_TX = '0x' + 'f1'.repeat(32);
const SETTLEMENT_TX = '0x' + 'f2'.repeat(32);
const at = (iso: string) => new Date(iso);

const TRACE = [{ rule: 'policy.binding', result: 'PASS', observed: null, limit: null, note: '' }];

function escalation(extra: Record<string, unknown> = {}): DisputeEscalationSource {
  return {
    pollRef: 'esc_' + '1'.repeat(24),
    state: 'APPROVED',
    decision: 'ESCALATED_THRESHOLD',
    decidingRule: 'escalate.aboveThreshold',
    ruleReason: 'amount above escalateAbove',
    createdAt: at('2026-11-20T10:00:00Z'),
    expiresAt: at('2026-11-20T10:30:00Z'),
    resolvedAt: at('2026-11-20T10:05:00Z'),
    resolvedVia: 'dashboard',
    resolvedBy: '0x' + 'aa'.repeat(20),
    ownerSigned: false,
    approvalUsedAt: at('2026-11-20T10:05:01Z'),
    ...extra,
  } as DisputeEscalationSource;
}

function source(overrides: Partial<DisputePacketSource> = {}): DisputePacketSource {
  return {
    intent: {
      intentId: INTENT_ID,
      policyId: '42',
      capability: 'domains.check',
      provider: 'spendctl-domains',
      category: 'domains',
      state: 'COMPLETED',
      stateReason: null,
      createdAt: at('2026-11-20T09:59:00Z'),
      updatedAt: at('2026-11-20T10:07:00Z'),
      intentHash: INTENT_HASH,
      spendIntent: { policyId: '42', amount: '50250' },
      quote: {
        fee: '0',
        spread: '250',
        providerCost: { network: 'eip155:8453', asset: '0x' + '02'.repeat(20), amount: '50000' },
      },
      decision: {
        decision: 'APPROVED',
        policyHash: '0x' + 'CD'.repeat(32),
        policyVersion: 1,
        evaluatedAt: '2026-11-20T10:05:02.000Z',
        engine: { version: '1', ruleCount: 14 },
        ruleTrace: TRACE,
        receiptId: '0x' + '0d'.repeat(32),
      },
      pollRef: 'esc_' + '1'.repeat(24),
      funding: {
        network: 'eip155:196',
        asset: '0x' + '01'.repeat(20),
        amount: '50250',
        payer: '0x' + 'aa'.repeat(20),
        payTo: '0x' + 'bb'.repeat(20),
        txHash: FUNDING_TX,
        groupId: 'lg_' + '1'.repeat(24),
      },
      settlement: {
        txHash: SETTLEMENT_TX,
        blockNumber: '77',
        groupId: 'lg_' + '2'.repeat(24),
        authorization: { from: '0x' + 'cc'.repeat(20), to: '0x' + 'dd'.repeat(20), value: '50000' },
      },
      providerAttested: { status: 'ATTESTED', fields: { domain: 'a.test', available: true } },
      serviceVerified: { verified: true, method: 'RDAP', source: 'registry', detail: null },
    },
    escalation: escalation(),
    fundingBlockNumber: '12',
    receipt: { intentId: INTENT_ID, anchor: { state: 'PENDING' } },
    decisionAnchor: { state: 'PENDING', receiptId: '0x' + '0d'.repeat(32) },
    ledgerGroups: [
      {
        groupId: 'lg_' + '1'.repeat(24),
        kind: 'FUNDING',
        asset: 'eip155:196|0x' + '01'.repeat(20),
        reverses: null,
        memo: 'x402 funding',
        createdAt: at('2026-11-20T10:06:00Z'),
        entries: [
          { entryNo: 1, account: 'TREASURY:x:y', amountAtomic: '50250' },
          { entryNo: 2, account: 'USER_OBLIGATION:x:y', amountAtomic: '-50250' },
        ],
      },
    ],
    generatedAt: at('2026-11-21T00:00:00Z'),
    ...overrides,
  };
}

const digestElsewhere = (packet: Record<string, unknown>) => {
  const { integrity: _integrity, ...covered } = packet;
  return keccak256(toBytes(canonicalize(covered)!));
};

test('the digest is keccak256 of the JCS of the packet without integrity, recomputed elsewhere', () => {
  const packet = buildDisputePacket(source());
  expect(packet.packet).toBe(DISPUTE_PACKET_KIND);
  expect(packet.integrity.digest).toBe(digestElsewhere(packet));
  expect(disputePacketDigest(packet)).toBe(packet.integrity.digest);
});

test('one changed value anywhere changes the digest', () => {
  const packet = buildDisputePacket(source());
  const tampered = JSON.parse(JSON.stringify(packet));
  tampered.paymentLegs.settlement.amount = '50001';
  expect(digestElsewhere(tampered)).not.toBe(packet.integrity.digest);
  const regenerated = buildDisputePacket(source({ fundingBlockNumber: '13' }));
  expect(regenerated.integrity.digest).not.toBe(packet.integrity.digest);
});

test('the approval names who, when and the channel kind, and never the reply code', () => {
  const stuffed = escalation({ code: REPLY_CODE, codeSha256: 'deadbeef', replyCode: REPLY_CODE });
  const packet = buildDisputePacket(source({ escalation: stuffed }));
  expect(packet.approval).toEqual({
    pollRef: 'esc_' + '1'.repeat(24),
    state: 'APPROVED',
    escalatedAs: 'ESCALATED_THRESHOLD',
    rule: 'escalate.aboveThreshold',
    reason: 'amount above escalateAbove',
    requestedAt: '2026-11-20T10:00:00.000Z',
    expiresAt: '2026-11-20T10:30:00.000Z',
    decidedAt: '2026-11-20T10:05:00.000Z',
    decidedBy: '0x' + 'aa'.repeat(20),
    channel: 'dashboard',
    ownerSigned: false,
    usedAt: '2026-11-20T10:05:01.000Z',
  });
  const text = JSON.stringify(packet);
  expect(text).not.toContain(REPLY_CODE);
  expect(text).not.toContain('deadbeef');
});

test('an intent approved without escalation has approval null', () => {
  expect(buildDisputePacket(source({ escalation: null })).approval).toBeNull();
});

test('both legs carry tx hash, block number and ledger group; attestation and finding stay apart', () => {
  const packet = buildDisputePacket(source()) as Record<string, any>;
  expect(packet.paymentLegs.funding).toMatchObject({
    chain: 'eip155:196',
    amount: '50250',
    txHash: FUNDING_TX,
    blockNumber: '12',
    ledgerGroupId: 'lg_' + '1'.repeat(24),
  });
  expect(packet.paymentLegs.settlement).toMatchObject({
    chain: 'eip155:8453',
    amount: '50000',
    sender: '0x' + 'cc'.repeat(20),
    recipient: '0x' + 'dd'.repeat(20),
    txHash: SETTLEMENT_TX,
    blockNumber: '77',
    ledgerGroupId: 'lg_' + '2'.repeat(24),
  });
  expect(packet.providerAttested.status).toBe('ATTESTED');
  expect(packet.serviceVerified.verified).toBe(true);
  expect(packet.policy).toEqual({
    policyId: '42',
    policyHash: '0x' + 'cd'.repeat(32),
    policyVersion: 1,
  });
  expect(packet.decision.ruleTrace).toEqual(TRACE);
  expect(packet.ledger.groups[0].entries).toEqual([
    { entryNo: 1, account: 'TREASURY:x:y', amount: '50250' },
    { entryNo: 2, account: 'USER_OBLIGATION:x:y', amount: '-50250' },
  ]);
});

test('an unfunded intent has no legs and no receipt, and still a digest', () => {
  const base = source();
  const packet = buildDisputePacket(
    source({
      intent: { ...base.intent, state: 'AWAITING_FUNDING', funding: null, settlement: null },
      fundingBlockNumber: null,
      receipt: null,
      ledgerGroups: [],
    }),
  ) as Record<string, any>;
  expect(packet.paymentLegs).toEqual({ funding: null, settlement: null });
  expect(packet.receipt).toBeNull();
  expect(packet.integrity.digest).toBe(digestElsewhere(packet));
});
