// Sign-in mutations, open to anyone (signing in is how a caller gets a credential): a fresh nonce,
// and the verification of a signed SIWE message into claims. The gateway's sign-in routes run these
// and mint the session bearer; called directly they only burn the nonce and return the claims.
import { Args, ArgsType, Ctx, Field, Mutation, Resolver } from 'type-graphql';
import type { SubgraphContext } from '../../kit';
import { SIGN_IN_SESSION, SignInClaims, SignInNonce, type SignInSessionValue } from './schema';
import {
  issueSignInNonce,
  type SignInClaimsView,
  type SignInNonceView,
  verifySignIn,
} from './siwe';

@ArgsType()
class VerifySignInArgs {
  @Field({ description: 'The EIP-4361 message exactly as signed.' })
  message!: string;

  @Field({ description: '0x-hex personal_sign signature (EOA, ERC-1271 or ERC-6492).' })
  signature!: string;

  @Field(() => SIGN_IN_SESSION)
  session!: SignInSessionValue;
}

@Resolver()
export class SignInResolver {
  @Mutation(() => SignInNonce, {
    description: 'A single-use nonce, valid ten minutes, and what the SIWE message must name.',
  })
  async issueSignInNonce(@Ctx() ctx: SubgraphContext): Promise<SignInNonceView> {
    return issueSignInNonce(ctx);
  }

  @Mutation(() => SignInClaims, {
    description:
      'Uses the message’s nonce up first (even when verification then fails), checks domain, Chain ID, time window, ' +
      'resources and signature, and for CONSUMER that the signer owns the named policy (NOT_POLICY_OWNER otherwise).',
  })
  async verifySignIn(
    @Args() args: VerifySignInArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<SignInClaimsView> {
    return verifySignIn(ctx, args);
  }
}
