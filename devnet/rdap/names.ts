// The devnet's registry contents, shared by the RDAP registry and the devnet domains merchant so
// both tell the same story: the TLDs the devnet registry serves, and the names registered there.

/** TLDs the devnet bootstrap points at the devnet registry (both reserved for testing, RFC 2606/6761). */
export const DEVNET_RDAP_TLDS: readonly string[] = ['test', 'example'];

/** Registered on the devnet registry; any other name under DEVNET_RDAP_TLDS is not (404). A-labels. */
export const DEVNET_REGISTERED_NAMES: readonly string[] = [
  'taken.test',
  'example.test',
  'registered.example',
  // münchen.test, so internationalised names are exercised end to end.
  'xn--mnchen-3ya.test',
];
