// GraphQL types of sign-in: the session kind a message asks for, the single-use nonce with what the
// SIWE message must name, and the verified claims the gateway turns into a session bearer.
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';

export const SIGN_IN_SESSION = { CONSUMER: 'CONSUMER', OWNER: 'OWNER' } as const;
export type SignInSessionValue = keyof typeof SIGN_IN_SESSION;

registerEnumType(SIGN_IN_SESSION, {
  name: 'SignInSession',
  description:
    'CONSUMER: bound to the one policy named in the message Resources (svc:policy:<policyId>). OWNER: every policy the address owns; the message names no policy.',
});

@ObjectType({ description: 'A fresh single-use sign-in nonce and what the SIWE message must say.' })
export class SignInNonce {
  @Field({ description: '16 random bytes, 32 lowercase hex characters. Single use.' })
  nonce!: string;

  @Field()
  issuedAt!: Date;

  @Field({ description: 'Ten minutes after issue.' })
  expiresAt!: Date;

  @Field({ description: 'The message domain: the host of the service’s public URL.' })
  domain!: string;

  @Field({ description: 'A URI for the message: the service’s public URL.' })
  uri!: string;

  @Field(() => Int, { description: 'The message Chain ID: the primary chain (196).' })
  chainId!: number;

  @Field()
  version!: string;

  @Field({ description: 'A statement for the message (any statement is accepted).' })
  statement!: string;

  @Field({ description: 'The Resources entry of a consumer sign-in: svc:policy:<policyId>.' })
  resourceFormat!: string;
}

@ObjectType({
  description: 'What a verified sign-in proves. The gateway turns it into a session bearer.',
})
export class SignInClaims {
  @Field({ description: 'The signing address, lowercase 0x-hex.' })
  address!: string;

  @Field(() => SIGN_IN_SESSION)
  session!: SignInSessionValue;

  @Field(() => ID, {
    nullable: true,
    description: 'The one policy a CONSUMER session is bound to; null for OWNER.',
  })
  policyId!: string | null;

  @Field({ description: 'Thirty minutes after verification.' })
  expiresAt!: Date;
}
