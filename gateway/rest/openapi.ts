// /openapi.json, generated from the same route table that serves the requests: paths, methods,
// prices (as the x-price extension), admin security, and the one error body every failure uses.
import { describePrice } from './serviceMap';
import { isPriced, type RestServiceInfo, type RouteDefinition } from './types';

function openapiPath(path: string): { path: string; params: string[] } {
  const params: string[] = [];
  const converted = path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_match, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path: converted, params };
}

const errorResponse = {
  description: 'Error',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
};

/** The answers a route may give: success, the error body everywhere, auth and payment where they apply. */
function responsesOf(route: RouteDefinition): Record<string, unknown> {
  const responses: Record<string, unknown> = {
    '200': {
      description: 'Success',
      content: { 'application/json': { schema: { type: 'object' } } },
    },
    '400': errorResponse,
    '404': errorResponse,
    '429': errorResponse,
    '500': errorResponse,
  };
  if (route.auth !== 'public') {
    responses['401'] = errorResponse;
    responses['403'] = errorResponse;
  }
  if (isPriced(route.price)) {
    responses['402'] = {
      description:
        'Payment required: the x402 v2 challenge is in the payment-required header; the body is {}',
      headers: {
        'payment-required': {
          schema: { type: 'string', description: 'base64 JSON PaymentRequired' },
        },
      },
      content: { 'application/json': { schema: { type: 'object', maxProperties: 0 } } },
    };
    responses['503'] = {
      ...errorResponse,
      description:
        'PAYMENT_SETTLEMENT_PENDING: the payment is sent and unconfirmed; present the same PAYMENT-SIGNATURE again (Retry-After)',
    };
  }
  return responses;
}

/** One route as an OpenAPI operation: purpose, group, price, path parameters, body, security. */
function operationOf(route: RouteDefinition, params: string[], service: RestServiceInfo) {
  return {
    summary: route.purpose,
    tags: [route.group],
    'x-price': describePrice(route.price, service),
    parameters: params.map((name) => ({
      name,
      in: 'path',
      required: true,
      schema: { type: 'string' },
    })),
    ...(route.method === 'POST'
      ? {
          requestBody: {
            required: false,
            content: { 'application/json': { schema: { type: 'object' } } },
          },
        }
      : {}),
    ...(route.auth === 'admin' ? { security: [{ adminBearer: [] }] } : {}),
    ...(route.auth === 'consumer' ? { security: [{ sessionBearer: [] }] } : {}),
    responses: responsesOf(route),
  };
}

export function openApiDocument(service: RestServiceInfo, routes: readonly RouteDefinition[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const { path, params } = openapiPath(route.path);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operationOf(route, params, service);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: service.serviceName,
      description: service.serviceDescription,
      version: service.version,
    },
    servers: [{ url: service.publicUrl }],
    paths,
    components: {
      securitySchemes: {
        adminBearer: { type: 'http', scheme: 'bearer' },
        sessionBearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'owner or consumer session from /consumer/auth/verify or /owner/auth/verify',
        },
      },
      schemas: {
        ErrorBody: {
          type: 'object',
          required: ['code', 'message', 'retryable', 'docsUrl'],
          properties: {
            code: { type: 'string', pattern: '^[A-Z][A-Z0-9_]*$' },
            message: { type: 'string' },
            retryable: { type: 'boolean' },
            docsUrl: { type: ['string', 'null'] },
            details: {},
            correlationId: { type: 'string' },
          },
        },
      },
    },
  };
}
