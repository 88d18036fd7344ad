// Which port a subgraph role listens on, and the base it refuses.
import { subgraphRolePort } from './roles';
import { StartupError } from './startup';

test('a subgraph role listens on SUBGRAPH_PORT_BASE plus its index', () => {
  expect(subgraphRolePort(4101, 'catalog')).toBe(4101);
  expect(subgraphRolePort(4101, 'builder')).toBe(4105);
  expect(subgraphRolePort(9000, 'intent')).toBe(9003);
});

test('a subgraph role refuses base 0: the gateway must know its port in advance', () => {
  expect(() => subgraphRolePort(0, 'ledger')).toThrow(StartupError);
  expect(() => subgraphRolePort(0, 'ledger')).toThrow(
    'the ledger role needs a fixed port: SUBGRAPH_PORT_BASE=0 picks free ports for the all-in-one only',
  );
});
