// The registration-v1 identity card (ERC-8004 agent registration file) served at
// /agent-registration.json and /.well-known/agent-registration.json; values come from config.
import type { RestServiceInfo } from './types';

export const REGISTRATION_V1_TYPE = 'https://eips.ethereum.org/EIPS/eip-8004#registration-v1';

export function registrationCard(service: RestServiceInfo) {
  const base = service.publicUrl.replace(/\/$/, '');
  return {
    type: REGISTRATION_V1_TYPE,
    name: service.serviceName,
    description: service.serviceDescription,
    image: service.serviceImageUrl,
    services: [
      { name: 'web', endpoint: `${base}/` },
      { name: 'catalog', endpoint: `${base}/catalog` },
      { name: 'openapi', endpoint: `${base}/openapi.json` },
      { name: 'graphql', endpoint: `${base}/graphql` },
    ],
    x402Support: true,
    active: true,
    registrations: service.agentRegistrations.map((registration) => ({ ...registration })),
    supportedTrust: ['reputation'],
  };
}

/** The default card image (SERVICE_IMAGE_URL defaults to <PUBLIC_URL>/logo.svg): a plain mark, no external assets. */
export const LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64">
<rect width="64" height="64" rx="12" fill="#0f172a"/>
<path d="M18 40c0 4 4 7 14 7s14-3 14-8-5-7-14-8-13-3-13-7 4-7 13-7 13 3 13 6" fill="none" stroke="#38bdf8" stroke-width="5" stroke-linecap="round"/>
</svg>
`;
