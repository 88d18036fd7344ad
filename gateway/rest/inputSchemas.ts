// A route's input as JSON Schema, for the MCP tools' inputSchema and the bazaar discovery metadata:
// its path parameters, and for the routes that take a SpendIntent the intent as the same zod schema
// the REST validation runs (core/validation/intentSchema) describes it. Other body fields are the
// route's to check (additionalProperties), exactly as over REST.
import { z } from 'zod';
import { spendIntentWireSchema } from '../../core/validation/intentSchema';
import type { RouteDefinition } from './types';

export function pathParamsOf(path: string): string[] {
  return path
    .split('/')
    .filter((segment) => segment.startsWith(':'))
    .map((segment) => segment.slice(1));
}

/** The intent the intent tools take, as the same zod schema the REST validation runs describes it. */
function intentJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(spendIntentWireSchema, { io: 'input', unrepresentable: 'any' });
  const { $schema: _dropped, ...rest } = schema as Record<string, unknown>;
  return rest;
}

const INTENT_ROUTES = new Set(['/create_spend_intent', '/preflight_payment', '/detect_duplicate']);

/** A route's arguments as JSON Schema: path parameters, and the intent tools' intent from its zod schema. */
export function routeInputSchema(route: RouteDefinition): Record<string, unknown> {
  const pathParams = pathParamsOf(route.path);
  const properties: Record<string, unknown> = {};
  for (const name of pathParams)
    properties[name] = { type: 'string', description: `path :${name}` };
  if (INTENT_ROUTES.has(route.path)) {
    properties.policyId = { type: 'string' };
    properties.intent = intentJsonSchema();
    if (route.path !== '/create_spend_intent')
      properties.intentHash = { type: 'string', description: 'a stored intent, instead of intent' };
  }
  return {
    type: 'object',
    properties,
    ...(pathParams.length > 0 ? { required: [...pathParams] } : {}),
    // Every other argument is the route's body (POST) or query (GET), checked by the route itself.
    additionalProperties: !INTENT_ROUTES.has(route.path),
  };
}
