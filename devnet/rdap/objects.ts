// The RFC 9083 JSON the devnet registry answers: a domain object shaped like a real registry's
// (status, events, registrar entity, nameservers, self link, notices) and the error response object.
export const RDAP_CONTENT_TYPE = 'application/rdap+json';
const CONFORMANCE = [
  'rdap_level_0',
  'icann_rdap_response_profile_1',
  'icann_rdap_technical_implementation_guide_1',
];
const YEAR_MS = 365 * 24 * 60 * 60 * 1000;

export function domainObject(ldhName: string, baseUrl: string, registryStartedAt: Date): string {
  const self = `${baseUrl}/domain/${ldhName}`;
  const registeredAt = new Date(registryStartedAt.getTime() - YEAR_MS);
  return JSON.stringify({
    rdapConformance: CONFORMANCE,
    objectClassName: 'domain',
    handle: `DEVNET-${ldhName.toUpperCase().replace(/[^A-Z0-9]/g, '-')}`,
    ldhName,
    status: ['active', 'client transfer prohibited'],
    events: [
      { eventAction: 'registration', eventDate: registeredAt.toISOString() },
      {
        eventAction: 'expiration',
        eventDate: new Date(registeredAt.getTime() + 2 * YEAR_MS).toISOString(),
      },
      { eventAction: 'last changed', eventDate: registeredAt.toISOString() },
      { eventAction: 'last update of RDAP database', eventDate: registryStartedAt.toISOString() },
    ],
    entities: [
      {
        objectClassName: 'entity',
        handle: '9999',
        roles: ['registrar'],
        publicIds: [{ type: 'IANA Registrar ID', identifier: '9999' }],
        vcardArray: [
          'vcard',
          [
            ['version', {}, 'text', '4.0'],
            ['fn', {}, 'text', 'Devnet Registrar'],
          ],
        ],
      },
    ],
    nameservers: [
      { objectClassName: 'nameserver', ldhName: `ns1.${ldhName}` },
      { objectClassName: 'nameserver', ldhName: `ns2.${ldhName}` },
    ],
    secureDNS: { delegationSigned: false },
    links: [{ value: self, rel: 'self', href: self, type: RDAP_CONTENT_TYPE }],
    notices: [
      {
        title: 'Devnet',
        description: ['A local stand-in registry for tests; nothing here is a real registration.'],
      },
    ],
  });
}

/** RFC 9083 §6: errorCode, title, description. */
export function errorObject(errorCode: number, title: string, description: string): string {
  return JSON.stringify({
    rdapConformance: ['rdap_level_0'],
    errorCode,
    title,
    description: [description],
  });
}
