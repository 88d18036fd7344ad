// Loaded before every test file: the gateway must never phone home, and type-graphql needs
// reflect-metadata before any decorated class is evaluated.
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
import 'reflect-metadata';
