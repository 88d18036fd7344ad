#!/usr/bin/env node
// Completes package-lock.json for `npm ci` on this network: the registry reachable here lacks some
// other platforms' optional binaries (e.g. @unrs/resolver-binding-darwin-x64), so `npm install`
// leaves them out of the lockfile and `npm ci` then refuses it ("Missing: … from lock file"). This
// adds each missing optional platform package with the os/cpu its name states, so npm ci skips it
// on every other platform exactly as it would with a complete lockfile. Run after `npm install`:
//   node tools/complete-lockfile.js            (writes)     node tools/complete-lockfile.js --check
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const OS = ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openharmony'];
const CPU = {
  amd64: 'x64',
  x64: 'x64',
  arm64: 'arm64',
  arm: 'arm',
  ia32: 'ia32',
  ppc64: 'ppc64',
  riscv64: 'riscv64',
  s390x: 's390x',
  loong64: 'loong64',
};

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((part) => OS.includes(part));
  const cpu = parts.map((part) => CPU[part]).find(Boolean);
  return os && cpu ? { os, cpu } : null;
}

function missingOptionals(lock) {
  const packages = lock.packages;
  const missing = new Map();
  for (const [key, entry] of Object.entries(packages)) {
    for (const [name, spec] of Object.entries(entry.optionalDependencies || {})) {
      const nested = `${key}/node_modules/${name}`;
      if (packages[nested] || packages[`node_modules/${name}`] || missing.has(name)) continue;
      missing.set(name, { spec, dev: entry.dev === true, license: entry.license });
    }
  }
  return missing;
}

function main() {
  const file = path.join(__dirname, '..', 'package-lock.json');
  const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
  const missing = missingOptionals(lock);
  if (process.argv.includes('--check')) {
    if (missing.size === 0) return 0;
    process.stderr.write(
      `package-lock.json lacks ${missing.size} optional platform packages (npm ci will refuse it): run node tools/complete-lockfile.js\n`,
    );
    return 1;
  }
  for (const [name, { spec, dev, license }] of missing) {
    const platform = platformOf(name);
    if (!platform || !/^\d+\.\d+\.\d+/.test(spec)) {
      process.stderr.write(
        `cannot tell the platform or exact version of ${name}@${spec}; add it by hand\n`,
      );
      return 1;
    }
    const entry = { version: spec, cpu: [platform.cpu] };
    if (dev) entry.dev = true;
    if (license) entry.license = license;
    entry.optional = true;
    entry.os = [platform.os];
    lock.packages[`node_modules/${name}`] = entry;
  }
  const sorted = Object.keys(lock.packages).sort((a, b) =>
    a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0,
  );
  lock.packages = Object.fromEntries(sorted.map((key) => [key, lock.packages[key]]));
  fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  process.stdout.write(`added ${missing.size} optional platform packages to package-lock.json\n`);
  return 0;
}

process.exit(main());
