// The relayer accounts' nonces, kept in this process. Every account that sends from a relayer key
// (the rail's facilitator, the group relayer, the consumer worker's refunds) draws its nonces here,
// so none collide. The chain's pending count is read once per account and chain; from then on each
// nonce handed out is the last one plus one, with no eth_getTransactionCount per transaction (viem's
// own manager reads the count before every send: one round trip per group on the paid path, in the
// path of every member). A reset forgets the count: the next nonce is read from the chain again,
// which may hand back a nonce whose transaction never reached the node. That is what every sender
// does after an outcome it could not see, as before. This holds only while no other process sends
// from the same key: docs/operations.md asks for one relayer key per process.
import type { Address, Client, NonceManager } from 'viem';
import { getTransactionCount } from 'viem/actions';

type Account = { readonly address: Address; readonly chainId: number };

/** The chain's count of the account's transactions, those in its pool included. */
const readPending = (client: Client, address: Address) =>
  getTransactionCount(client, { address, blockTag: 'pending' });

export function createRelayerNonces(): NonceManager {
  /** Per account and chain: the next nonce to hand out (a promise while the first read is under way). */
  const next = new Map<string, Promise<number>>();
  const keyOf = ({ address, chainId }: Account) => `${address.toLowerCase()}.${chainId}`;

  /** Moves the account's next nonce on by one; a failed read moves nothing and is forgotten. */
  const advance = (key: string, current: Promise<number>): void => {
    const after = current.then((nonce) => nonce + 1);
    next.set(key, after);
    after.catch(() => {
      if (next.get(key) === after) next.delete(key);
    });
  };

  return {
    consume({ address, chainId, client }) {
      const key = keyOf({ address, chainId });
      const mine = next.get(key) ?? readPending(client, address);
      advance(key, mine);
      return mine;
    },
    get({ address, chainId, client }) {
      return next.get(keyOf({ address, chainId })) ?? readPending(client, address);
    },
    increment(account) {
      const key = keyOf(account);
      const known = next.get(key);
      // Not read yet: the first read counts whatever the node already holds.
      if (known) advance(key, known);
    },
    reset(account) {
      next.delete(keyOf(account));
    },
  };
}

/** The process's one manager for every relayer account. */
export const relayerNonces: NonceManager = createRelayerNonces();
