// The demo café: its menu and a paid latte order whose fulfilment is a voucher code. It shows a
// priced route end to end; the order logic lives in ../cafe.ts.
import { cafeMenu, orderLatte, validateLatteOrder } from '../cafe';
import { FREE, type RouteDefinition, usdt0 } from '../types';

const LATTE_PRICE = usdt0('0.04');

export const cafeRoutes: readonly RouteDefinition[] = [
  {
    method: 'GET',
    path: '/cafe/menu',
    purpose: 'demo café menu',
    group: 'cafe',
    auth: 'public',
    price: FREE,
    handler: (_input, service) => cafeMenu(LATTE_PRICE, service),
  },
  {
    method: 'POST',
    path: '/cafe/order/latte',
    purpose: 'demo café order; fulfilment is a voucher code, not a real coffee',
    group: 'cafe',
    auth: 'public',
    price: LATTE_PRICE,
    validate: validateLatteOrder,
    handler: (input, service) => orderLatte(input, LATTE_PRICE, service),
  },
];
