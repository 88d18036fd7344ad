// The MCP tools (DECISIONS "MCP"): one tool per REST route, named from the route. A tool's
// arguments are the route's path parameters plus its body (POST) or query (GET); its answer is the
// REST body. The route table stays the one source: price, auth and validation are the route's.
import { formatAmount } from '../../core/money/amount';
import { routeKey } from '../graphql/paidFields';
import { pathParamsOf, routeInputSchema } from '../rest/inputSchemas';
import type { RouteDefinition } from '../rest/types';

/** A tool and the route it calls. */
export interface ToolBinding {
  readonly name: string;
  readonly method: 'GET' | 'POST';
  readonly path: string;
}

export const TOOL_BINDINGS: readonly ToolBinding[] = [
  { name: 'ping_service', method: 'GET', path: '/ping_service' },
  { name: 'create_spend_intent', method: 'POST', path: '/create_spend_intent' },
  { name: 'preflight_payment', method: 'POST', path: '/preflight_payment' },
  { name: 'verify_delivery', method: 'POST', path: '/verify_delivery' },
  { name: 'detect_duplicate', method: 'POST', path: '/detect_duplicate' },
  { name: 'redact_payment_metadata', method: 'POST', path: '/redact_payment_metadata' },
  { name: 'get_ledger', method: 'POST', path: '/get_ledger' },
  { name: 'log_receipt', method: 'POST', path: '/log_receipt' },
  { name: 'score_vendor', method: 'POST', path: '/score_vendor' },
  { name: 'score_buyer', method: 'POST', path: '/score_buyer' },
  { name: 'generate_dispute_packet', method: 'POST', path: '/generate_dispute_packet' },
  { name: 'reconcile_agent_spend', method: 'POST', path: '/reconcile_agent_spend' },
  { name: 'policy_what_if', method: 'POST', path: '/policy_what_if' },
  { name: 'receipt_status', method: 'GET', path: '/receipt_status/:receiptId' },
  { name: 'escalation_status', method: 'GET', path: '/escalation_status/:pollRef' },
  { name: 'catalog', method: 'GET', path: '/catalog' },
  { name: 'consumer_catalog', method: 'GET', path: '/consumer/catalog' },
  { name: 'consumer_create_intent', method: 'POST', path: '/consumer/intents' },
  { name: 'consumer_intent', method: 'GET', path: '/consumer/intents/:intentId' },
  { name: 'consumer_fund_intent', method: 'POST', path: '/consumer/intents/:intentId/fund' },
  { name: 'consumer_execute_intent', method: 'POST', path: '/consumer/intents/:intentId/execute' },
  { name: 'consumer_receipt', method: 'GET', path: '/consumer/receipt/:intentId' },
  { name: 'cafe_menu', method: 'GET', path: '/cafe/menu' },
  { name: 'cafe_order_latte', method: 'POST', path: '/cafe/order/latte' },
  { name: 'builder_brand_pack', method: 'POST', path: '/builder/brand_pack' },
  { name: 'builder_suggest_names', method: 'POST', path: '/builder/suggest_names' },
  { name: 'builder_check_domains', method: 'POST', path: '/builder/check_domains' },
  { name: 'builder_rank_options', method: 'POST', path: '/builder/rank_options' },
  { name: 'builder_seo_tips', method: 'POST', path: '/builder/seo_tips' },
];

/** A tool bound to its route. */
export interface Tool {
  readonly name: string;
  readonly route: RouteDefinition;
  /** `:name` segments of the route path: required string arguments. */
  readonly pathParams: readonly string[];
  readonly inputSchema: Record<string, unknown>;
  readonly description: string;
}

function priceText(route: RouteDefinition, decimals: number): string {
  const { price } = route;
  if (price.kind === 'paid')
    return `Price: ${formatAmount(price.amountAtomic, decimals)} USDT0, paid with x402 (params._meta["x402/payment"]).`;
  if (price.kind === 'dynamic') return `Price: ${price.basis}, paid with x402.`;
  return 'Free.';
}

/** The tools, each bound to its route in `routes`; a binding without its route is a startup error. */
export function buildTools(routes: readonly RouteDefinition[], assetDecimals: number): Tool[] {
  return TOOL_BINDINGS.map((binding) => {
    const route = routes.find(
      (candidate) => candidate.method === binding.method && candidate.path === binding.path,
    );
    if (!route)
      throw new Error(`MCP tool ${binding.name}: no route ${binding.method} ${binding.path}`);
    const pathParams = pathParamsOf(route.path);
    return {
      name: binding.name,
      route,
      pathParams,
      inputSchema: routeInputSchema(route),
      description: `${route.purpose}. ${priceText(route, assetDecimals)} Same as REST ${routeKey(route)}.`,
    };
  });
}
