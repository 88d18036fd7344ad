// The rail's group path: verify one authorization alone (signature, window, balance, nonce unused,
// simulated), refusing a doomed one before anything is sent exactly as the single path does; then
// hand it to the group settler. A payment that passes MemberCheck (the facilitator's checks with
// a faster signature recovery) goes straight on; any other gets the official facilitator's verify,
// whose answer is the one given. Payloads the group cannot carry (an ERC-6492 or other
// non-65-byte signature) stay on the single path. The member check only reads, so the paywall may
// start it (precheck) while it claims the payment in PostgreSQL: the two round trips overlap.
import type { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import {
  type GroupAuthorization,
  createGroupRelayer,
} from '../../../platform/chain/settlementContract';
import type { RailOptions } from '../railOptions';
import type { Settlement } from '../settlement';
import { GroupSettler, groupAuthorizationOf } from './groupSettler';
import { MemberCheck, type MemberCheckChain } from './memberCheck';
import type { GroupSettlementOptions } from './types';

/** The rail's chain, token and relayer settings, with group settlement switched on. */
export type GroupPathOptions = Pick<
  RailOptions,
  | 'chainId'
  | 'rpcUrl'
  | 'token'
  | 'relayerPrivateKey'
  | 'confirmationTimeoutMs'
  | 'pollingIntervalMs'
> & { readonly group: GroupSettlementOptions };

/**
 * A member check started ahead of the settlement (see GroupPath.precheck): whether the payload
 * passed, for that payload and those requirements only, with its authorization as read for it.
 */
export interface GroupPrecheck {
  readonly payload: PaymentPayload;
  readonly requirements: PaymentRequirements;
  readonly authorization: GroupAuthorization;
  readonly passes: Promise<boolean>;
}

export interface GroupPath {
  readonly settler: GroupSettler;
  /**
   * Starts the member check of a payload the group can carry (undefined: the single path's). It
   * only reads (the chain's simulation, the payer's code), so it may run while the payment is
   * being claimed; it never rejects.
   */
  precheck(payload: PaymentPayload, requirements: PaymentRequirements): GroupPrecheck | undefined;
  /**
   * The group's Settlement for this payload; null when the payload must take the single path. A
   * precheck of this very payload and these requirements stands in for the member check.
   */
  settle(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    precheck?: GroupPrecheck,
  ): Promise<Settlement> | null;
}

export function createGroupPath(
  options: GroupPathOptions,
  facilitator: Pick<x402Facilitator, 'verify'>,
  chain: MemberCheckChain,
): GroupPath {
  const check = new MemberCheck(chain, options.chainId);
  const relayer = createGroupRelayer({
    chainId: options.chainId,
    rpcUrl: options.rpcUrl,
    relayerPrivateKey: options.relayerPrivateKey,
    contract: options.group.contract,
    token: options.token,
    confirmationTimeoutMs: options.confirmationTimeoutMs,
    pollingIntervalMs: options.pollingIntervalMs,
  });
  const settler = new GroupSettler(relayer, options.token, options.group);
  return {
    settler,
    precheck(payload, requirements) {
      const authorization = groupAuthorizationOf(payload);
      if (!authorization) return undefined;
      const passes = check.passes(payload, requirements, authorization);
      return { payload, requirements, authorization, passes };
    },
    settle(payload, requirements, precheck) {
      // A precheck stands for this payload only (its authorization read once), and only while its
      // window still holds.
      const ours = precheck?.payload === payload && precheck.requirements === requirements;
      const authorization = ours ? precheck.authorization : groupAuthorizationOf(payload);
      if (!authorization) return null;
      const ahead = ours && check.inWindow(authorization) ? precheck.passes : null;
      return (async (): Promise<Settlement> => {
        const verdict = (await (ahead ?? check.passes(payload, requirements, authorization)))
          ? { isValid: true }
          : await facilitator.verify(payload, requirements);
        if (!verdict.isValid)
          return {
            success: false,
            errorReason: verdict.invalidReason ?? 'invalid_payload',
            transaction: '',
            network: requirements.network as Settlement['network'],
            payer: verdict.payer,
            broadcast: false,
          };
        return settler.submit({ authorization, requirements, network: requirements.network });
      })();
    },
  };
}
