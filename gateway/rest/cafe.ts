// The demo café: a menu (free) and a paid latte order whose fulfilment is a voucher code, not a
// coffee. It exists to show an agent paying a merchant-like route end to end; the voucher is
// random and lives in the payment's recorded answer, so re-presenting the payment returns the
// same voucher and never a second one.
import { randomBytes } from 'node:crypto';
import { newCafeOrderId } from '../../core/canon/ids';
import { AppError } from '../../core/errors';
import { formatAmount } from '../../core/money/amount';
import { stringFields } from './requestBodies';
import type { RestInput, RestResult, RestServiceInfo, RoutePrice } from './types';

export const LATTE_SKU = 'latte';
const MAX_CUP_NAME_CHARS = 40;
/** Crockford base32 without I, L, O, U: easy to read out at a counter. */
const VOUCHER_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export function cafeMenu(latte: RoutePrice, service: RestServiceInfo): RestResult {
  const price = latte.kind === 'paid' ? latte.amountAtomic : 0n;
  return {
    status: 200,
    body: {
      cafe: 'Demo café',
      notice: 'Orders are fulfilled with a demo voucher code, not a real coffee.',
      items: [
        {
          sku: LATTE_SKU,
          name: 'Caffè latte',
          price: {
            amountAtomic: price.toString(),
            amountDisplay: formatAmount(price, service.payment.assetDecimals),
            currency: service.payment.assetSymbol,
            network: service.payment.network,
          },
          order: {
            method: 'POST',
            path: '/cafe/order/latte',
            body: { cupName: `optional string, at most ${MAX_CUP_NAME_CHARS} characters` },
          },
        },
      ],
    },
  };
}

/** The order body: nothing, or a name for the cup. */
export function validateLatteOrder(input: RestInput): void {
  const { cupName } = stringFields(input, [{ name: 'cupName', required: false }]);
  if (
    cupName !== undefined &&
    (cupName.trim() === '' || [...cupName].length > MAX_CUP_NAME_CHARS)
  ) {
    throw new AppError('REQUEST_INVALID', 'The request body is invalid.', [
      { field: 'cupName', reason: `must be 1 to ${MAX_CUP_NAME_CHARS} characters` },
    ]);
  }
}

function voucherCode(): string {
  const bytes = randomBytes(10);
  const chars = [...bytes].map((byte) => VOUCHER_ALPHABET[byte % VOUCHER_ALPHABET.length]);
  return `LATTE-${chars.slice(0, 5).join('')}-${chars.slice(5).join('')}`;
}

export function orderLatte(
  input: RestInput,
  latte: RoutePrice,
  service: RestServiceInfo,
): RestResult {
  const { cupName } = stringFields(input, [{ name: 'cupName', required: false }]);
  const price = latte.kind === 'paid' ? latte.amountAtomic : 0n;
  return {
    status: 200,
    body: {
      orderId: newCafeOrderId(),
      sku: LATTE_SKU,
      ...(cupName !== undefined ? { cupName: cupName.trim() } : {}),
      amountPaid: formatAmount(price, service.payment.assetDecimals),
      currency: service.payment.assetSymbol,
      status: 'FULFILLED',
      voucherCode: voucherCode(),
      fulfillment: 'DEMO_VOUCHER',
    },
  };
}
