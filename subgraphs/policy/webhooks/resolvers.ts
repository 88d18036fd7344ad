// Owner webhooks in GraphQL (DECISIONS "Webhook endpoints"): the signed-in owner's endpoints and
// their deliveries, and the four writes. Owner sessions only; every read and write is scoped to
// the owner, so another owner's ids read as not found.
import { Arg, Args, ArgsType, Ctx, Field, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { isWebhookEndpointId } from '../../../core/canon/ids';
import { AppError } from '../../../core/errors';
import { requireActor, type SubgraphContext } from '../../kit';
import { pageSize } from '../policies/reads';
import {
  type DeliveryRow,
  type EndpointRow,
  readDeliveryPage,
  readEndpoint,
  readEndpoints,
} from './reads';
import {
  WebhookDelivery,
  WebhookDeliveryConnection,
  WebhookEndpoint,
  WebhookEndpointInput,
  WebhookEndpointSecret,
} from './schema';
import {
  createWebhookEndpoint,
  disableWebhookEndpoint,
  type EndpointWithSecret,
  redeliverWebhook,
  rotateWebhookSecret,
} from './writes';

@ArgsType()
class DeliveryPageArgs {
  @Field(() => ID)
  endpointId!: string;

  @Field(() => Int, { nullable: true, description: 'Page size, 1 to 100 (default 20).' })
  first?: number | null;

  @Field(() => String, { nullable: true, description: 'The endCursor of the previous page.' })
  after?: string | null;
}

function endpointView(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.endpointId,
    url: row.url,
    events: row.events,
    policyIds: row.policyIds,
    state: row.state,
    createdAt: row.createdAt,
    secretRotatedAt: row.secretRotatedAt,
    disabledAt: row.disabledAt,
  };
}

function deliveryView(row: DeliveryRow): WebhookDelivery {
  const { deliveryId, ...rest } = row;
  return { id: deliveryId, ...rest };
}

function withSecretView(created: EndpointWithSecret): WebhookEndpointSecret {
  return { endpoint: endpointView(created.endpoint), secret: created.secret };
}

@Resolver()
export class WebhookResolver {
  @Query(() => [WebhookEndpoint], {
    description: 'The signed-in owner’s webhook endpoints, active and disabled.',
  })
  async webhookEndpoints(@Ctx() ctx: SubgraphContext): Promise<WebhookEndpoint[]> {
    const actor = requireActor(ctx, ['owner']);
    return (await readEndpoints(ctx.db, actor.address)).map(endpointView);
  }

  @Query(() => WebhookDeliveryConnection, {
    description: 'Deliveries of one of the owner’s endpoints, newest first (FAILED ones included).',
  })
  async webhookDeliveries(
    @Args() args: DeliveryPageArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<WebhookDeliveryConnection> {
    const actor = requireActor(ctx, ['owner']);
    const endpoint = isWebhookEndpointId(args.endpointId)
      ? await readEndpoint(ctx.db, actor.address, args.endpointId)
      : null;
    if (endpoint === null)
      throw new AppError('WEBHOOK_ENDPOINT_NOT_FOUND', undefined, { endpointId: args.endpointId });
    const page = await readDeliveryPage(ctx.db, {
      endpointId: endpoint.endpointId,
      first: pageSize(args.first),
      after: args.after ?? null,
    });
    return {
      nodes: page.nodes.map(deliveryView),
      pageInfo: { endCursor: page.endCursor, hasNextPage: page.hasNextPage },
    };
  }

  @Mutation(() => WebhookEndpointSecret, {
    description: 'A new endpoint; the answer shows its signing secret this once.',
  })
  async createWebhookEndpoint(
    @Arg('input', () => WebhookEndpointInput) input: WebhookEndpointInput,
    @Ctx() ctx: SubgraphContext,
  ): Promise<WebhookEndpointSecret> {
    const actor = requireActor(ctx, ['owner']);
    return withSecretView(
      await createWebhookEndpoint(ctx, actor.address, {
        url: input.url,
        events: input.events,
        policyIds: input.policyIds ?? [],
      }),
    );
  }

  @Mutation(() => WebhookEndpointSecret, {
    description: 'A new signing secret for an active endpoint, shown this once.',
  })
  async rotateWebhookSecret(
    @Arg('id', () => ID) id: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<WebhookEndpointSecret> {
    const actor = requireActor(ctx, ['owner']);
    return withSecretView(await rotateWebhookSecret(ctx, actor.address, id));
  }

  @Mutation(() => WebhookEndpoint, {
    description: 'Stops an endpoint: nothing more is sent; its pending deliveries end FAILED.',
  })
  async disableWebhookEndpoint(
    @Arg('id', () => ID) id: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<WebhookEndpoint> {
    const actor = requireActor(ctx, ['owner']);
    return endpointView(await disableWebhookEndpoint(ctx.db, actor.address, id, ctx.now()));
  }

  @Mutation(() => WebhookDelivery, {
    description: 'Sends a delivery again (due now, a fresh retry schedule).',
  })
  async redeliverWebhook(
    @Arg('deliveryId', () => ID) deliveryId: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<WebhookDelivery> {
    const actor = requireActor(ctx, ['owner']);
    return deliveryView(await redeliverWebhook(ctx.db, actor.address, deliveryId, ctx.now()));
  }
}
