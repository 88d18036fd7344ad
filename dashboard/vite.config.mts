// Builds the dashboard into dist/dashboard (served by the gateway at /) and prints the bundle's
// gzipped size, failing the build above 300 KB.
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

const LIMIT_BYTES = 300 * 1024;

function gzipBudget(): Plugin {
  return {
    name: 'gzip-budget',
    apply: 'build',
    generateBundle(_options, bundle) {
      let total = 0;
      for (const file of Object.values(bundle)) {
        const source = file.type === 'chunk' ? file.code : file.source;
        total += gzipSync(typeof source === 'string' ? Buffer.from(source) : source).length;
      }
      const kb = (total / 1024).toFixed(1);
      console.log(`dashboard bundle: ${kb} KB gzipped (limit ${LIMIT_BYTES / 1024} KB)`);
      if (total > LIMIT_BYTES) this.error(`The dashboard bundle is ${kb} KB gzipped, over 300 KB.`);
    },
  };
}

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/dashboard', import.meta.url)),
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
  },
  plugins: [gzipBudget()],
});
