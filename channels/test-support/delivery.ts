// Awaits a send that must fail and returns its ChannelDeliveryError (failing the test otherwise).
import { ChannelDeliveryError } from '../errors';

export async function deliveryError(promise: Promise<unknown>): Promise<ChannelDeliveryError> {
  const error = await promise.then(
    () => null,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(ChannelDeliveryError);
  return error as ChannelDeliveryError;
}
