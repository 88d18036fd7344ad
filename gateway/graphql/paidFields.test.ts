import { OperationTypeNode } from 'graphql';
import { loadPersistedDocuments } from '../rest/documents';
import { buildRoutes } from '../rest/routes';
import { FREE, usdt0, type RouteDefinition } from '../rest/types';
import { assertPaidFieldsAllowed, paidFieldsOf, routeRootFields } from './paidFields';

const documents = loadPersistedDocuments();

function route(
  path: string,
  price: RouteDefinition['price'],
  document: string,
  operationName: string,
): RouteDefinition {
  return {
    method: 'POST',
    path,
    purpose: 'test',
    group: 'control-plane',
    auth: 'public',
    price,
    operation: {
      document,
      // Some name documents that exist only in this test: typed as any one operation, the paid-field
      // check reads only the document.
      operationName: operationName as 'Catalog',
      variables: () => ({}),
      respond: () => ({ status: 200, body: {} }),
    },
  };
}

describe('paid fields', () => {
  it('reads the fields of the priced routes from the route table', () => {
    const paid = paidFieldsOf(buildRoutes(), documents);
    expect(Object.fromEntries(paid)).toEqual({
      'Mutation.brandPack': ['POST /builder/brand_pack'],
      'Mutation.fundConsumerIntent': ['POST /consumer/intents/:intentId/fund'],
      'Mutation.generateDisputePacket': ['POST /generate_dispute_packet'],
      'Mutation.preflightPayment': ['POST /preflight_payment'],
      'Mutation.suggestNames': ['POST /builder/suggest_names'],
      'Mutation.verifyDelivery': ['POST /verify_delivery'],
      'Query.detectDuplicate': ['POST /detect_duplicate'],
      'Query.reconcileAgentSpend': ['POST /reconcile_agent_spend'],
      'Query.scoreBuyer': ['POST /score_buyer'],
      'Query.scoreVendor': ['POST /score_vendor'],
    });
  });

  it('follows fragment spreads at the root of a document', () => {
    const source =
      'query Q { ...Roots } fragment Roots on Query { a: detectDuplicate(policyId: "1") ... on Query { catalog { maturityOrder } } }';
    const fields = routeRootFields(route('/q', FREE, 'q', 'Q'), new Map([['q', source]]));
    expect(fields.sort()).toEqual(['Query.catalog', 'Query.detectDuplicate']);
  });

  it('refuses a route table that gives a sold field away on a free route', () => {
    const routes = [
      route('/sold', usdt0('0.05'), 'preflightPayment', 'PreflightPayment'),
      route('/free', FREE, 'preflightPayment', 'PreflightPayment'),
    ];
    expect(() => paidFieldsOf(routes, documents)).toThrow(
      'route POST /free runs Mutation.preflightPayment, which POST /sold sells',
    );
  });

  it('admits a paid field only on a paid call of a route that sells it', () => {
    const paid = paidFieldsOf(buildRoutes(), documents);
    expect(() =>
      assertPaidFieldsAllowed(
        paid,
        OperationTypeNode.MUTATION,
        ['preflightPayment'],
        'POST /preflight_payment',
      ),
    ).not.toThrow();
    expect(() =>
      assertPaidFieldsAllowed(
        paid,
        OperationTypeNode.MUTATION,
        ['preflightPayment'],
        'POST /detect_duplicate',
      ),
    ).toThrow(/runs only through POST \/preflight_payment/);
    expect(() =>
      assertPaidFieldsAllowed(paid, OperationTypeNode.MUTATION, ['preflightPayment'], undefined),
    ).toThrow();
    expect(() =>
      assertPaidFieldsAllowed(paid, OperationTypeNode.QUERY, ['catalog'], undefined),
    ).not.toThrow();
  });
});
