// `spend-control archive detach`: what it accepts, and how it refuses the rest (a usage error).
import { parseArchiveArgs } from './archive';
import { UsageError } from './args';

test('takes a calendar date, and every log, the ledger, the decisions and the payments unless one is named', () => {
  expect(parseArchiveArgs(['detach', '--before', '2026-06-01'])).toEqual({
    before: new Date('2026-06-01T00:00:00Z'),
    logs: [
      'ledger.operator_actions',
      'policy.escalation_events',
      'policy.policy_changes',
      'ledger.groups',
      'intent.decisions',
      'ledger.service_payments',
    ],
  });
  expect(
    parseArchiveArgs(['detach', '--before', '2026-06-01', '--log', 'ledger.service_payments']),
  ).toEqual({ before: new Date('2026-06-01T00:00:00Z'), logs: ['ledger.service_payments'] });
  expect(
    parseArchiveArgs(['detach', '--before', '2026-06-01', '--log', 'intent.decisions']),
  ).toEqual({ before: new Date('2026-06-01T00:00:00Z'), logs: ['intent.decisions'] });
  expect(parseArchiveArgs(['detach', '--before', '2026-06-01', '--log', 'ledger.groups'])).toEqual({
    before: new Date('2026-06-01T00:00:00Z'),
    logs: ['ledger.groups'],
  });
  expect(
    parseArchiveArgs(['detach', '--before', '2024-02-29', '--log', 'policy.escalation_events']),
  ).toEqual({ before: new Date('2024-02-29T00:00:00Z'), logs: ['policy.escalation_events'] });
});

test.each([
  [[]],
  [['detach']],
  [['attach', '--before', '2026-06-01']],
  [['detach', '--before', '2026-6-1']],
  [['detach', '--before', '2026-02-30']],
  [['detach', '--before', '2026-06-01T00:00:00Z']],
  [['detach', '--before', '2026-06-01', '--log', 'ledger.entries']],
  [['detach', '--before', '2026-06-01', '--log', 'intent.decision_receipts']],
  [['detach', '--before', '2026-06-01', '--force']],
  [['detach', '--before', '2026-06-01', 'extra']],
])('refuses %j with a usage error', (argv) => {
  expect(() => parseArchiveArgs(argv)).toThrow(UsageError);
});
