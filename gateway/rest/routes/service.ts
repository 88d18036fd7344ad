// The routes that describe the service itself rather than run an operation: the paid health
// check, the service map, x402 discovery and the registration card. Their handlers read the route
// table they are served from, so what they describe is what is served.
import { x402Discovery } from '../../x402/discovery';
import { registrationCard } from '../identity';
import { serviceMap } from '../serviceMap';
import { FREE, type RouteDefinition, usdt0 } from '../types';
import { noInput } from './inputs';

export const pingServiceRoute: RouteDefinition = {
  method: 'GET',
  path: '/ping_service',
  purpose: 'health and payment-rail proof: a paid call that answers ok with the tool name',
  group: 'control-plane',
  auth: 'public',
  price: usdt0('0.01'),
  validate: (input) => {
    noInput(input);
  },
  handler: () => ({
    status: 200,
    body: { ok: true, tool: 'ping_service', ts: new Date().toISOString() },
  }),
};

export const serviceMapRoute: RouteDefinition = {
  method: 'GET',
  path: '/catalog',
  purpose: 'machine-readable service map: every route with its method, price and purpose',
  group: 'control-plane',
  auth: 'public',
  price: FREE,
  handler: (_input, service, routes) => ({ status: 200, body: serviceMap(service, routes) }),
};

export const x402DiscoveryRoute: RouteDefinition = {
  method: 'GET',
  path: '/.well-known/x402',
  purpose:
    'x402 discovery: every paid resource with its method, price, network and payment requirements',
  group: 'service',
  auth: 'public',
  price: FREE,
  handler: (_input, service, routes) => ({ status: 200, body: x402Discovery(service, routes) }),
};

export const registrationCardRoutes: readonly RouteDefinition[] = [
  {
    method: 'GET',
    path: '/agent-registration.json',
    purpose: 'registration-v1 identity card for marketplace rendering',
    group: 'identity',
    auth: 'public',
    price: FREE,
    handler: (_input, service) => ({ status: 200, body: registrationCard(service) }),
  },
  {
    method: 'GET',
    path: '/.well-known/agent-registration.json',
    purpose: 'registration-v1 identity card at the well-known path (domain proof)',
    group: 'identity',
    auth: 'public',
    price: FREE,
    handler: (_input, service) => ({ status: 200, body: registrationCard(service) }),
  },
];
