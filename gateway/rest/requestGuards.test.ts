// The one `:intentId` check (checkPathIds) over the real route table: every route that takes an
// intentId refuses a malformed one the same way, before any lookup or 402 (serveRoute runs it
// right after authentication); the public receipt keeps its not-found answer.
import { AppError } from '../../core/errors';
import { checkPathIds } from './requestGuards';
import { buildRoutes } from './routes';

const WELL_FORMED = `ci_${'0a'.repeat(12)}`;
const MALFORMED = ['ci_nope', 'ci_NOT-AN-ID', `0x${'ab'.repeat(32)}`, '', `ci_${'0'.repeat(25)}`];
const routes = buildRoutes().filter((route) => route.path.includes(':intentId'));

function refusal(route: (typeof routes)[number], intentId: string): AppError | null {
  try {
    checkPathIds(route, { intentId });
    return null;
  } catch (error) {
    return error as AppError;
  }
}

test('the routes that take an intentId are the consumer intent routes and the receipt', () => {
  expect(routes.map((route) => `${route.method} ${route.path}`).sort()).toEqual([
    'GET /consumer/intents/:intentId',
    'GET /consumer/receipt/:intentId',
    'POST /consumer/intents/:intentId/approve',
    'POST /consumer/intents/:intentId/execute',
    'POST /consumer/intents/:intentId/fund',
    'POST /consumer/intents/:intentId/resolve',
  ]);
});

test.each(routes.map((route) => [`${route.method} ${route.path}`, route] as const))(
  '%s: a malformed intentId is refused, a well-formed one passes',
  (_name, route) => {
    expect(refusal(route, WELL_FORMED)).toBeNull();
    const expected = route.path.startsWith('/consumer/receipt/')
      ? { code: 'RECEIPT_NOT_FOUND', status: 404 }
      : { code: 'REQUEST_INVALID', status: 400 };
    for (const intentId of MALFORMED) {
      const error = refusal(route, intentId);
      expect(error).toBeInstanceOf(AppError);
      expect({ code: error!.code, status: error!.status }).toEqual(expected);
    }
  },
);

test('a route without an intentId parameter is not checked', () => {
  expect(() => checkPathIds({ path: '/consumer/intents' }, { intentId: 'anything' })).not.toThrow();
});
