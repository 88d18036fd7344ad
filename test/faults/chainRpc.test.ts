// Fault: the service's RPC to both chains becomes unreachable under load (the provider is down or
// the network path is cut) and comes back a few seconds later. The service reaches each anvil
// chain through a TCP proxy that the test cuts: open connections are reset and new ones refused.
// Buyers and the merchant keep their own paths to the chains. While the RPC is gone, paid calls and
// purchases fail closed with retryable codes (a payment is parked or refused uncharged, never run
// unpaid and never taken twice); afterwards every kind of request succeeds again, the workers
// finish every purchase, and the books and chains agree — without a restart.
import { faultAnswers, faultWorldOfFile, runThroughFault } from './run';

const file = faultWorldOfFile();

test('both chain RPCs cut for 4 s under load and restored: requests fail closed with retryable codes, then every kind succeeds, every job drains, books zero, no payment doubled', async () => {
  const world = file.world();
  const run = await runThroughFault(world, file.agents(), {
    faultMs: 4_000,
    inject: async () => {
      await world.rpc.funding.cut();
      await world.rpc.settlement.cut();
    },
    // On a slow host every request of the first seconds may still be in flight: the cut lasts
    // until a paid path has answered it.
    felt: (load) => load.answers.some((answer) => answer.phase === 'fault' && answer.status >= 500),
    // Known, not fixed yet: a verification in flight when the connection is reset can be refused
    // as a bad signature (the facilitator's signature check reads the chain) just before the probe
    // sees the RPC again; the payer is not charged and signs anew. Anything else must not be a 402.
    // A settlement cut mid-send is parked until the chain decides it (at the latest when the
    // authorization expires, five minutes): decided unpaid, it is refused uncharged, as designed.
    knownRefusal: (answer) =>
      answer.refusal === 'invalid_exact_evm_signature' || answer.afterParked,
    heal: async () => {
      await world.rpc.funding.restore();
      await world.rpc.settlement.restore();
    },
  });
  const during = run.answers.filter((answer) => answer.phase === 'fault');
  // The fault was felt by the paid paths, each refusal retryable.
  expect(during.filter((answer) => answer.status >= 500).length).toBeGreaterThan(0);
  console.log('answers while the chain RPCs were cut', faultAnswers(run));
}, 480_000);
