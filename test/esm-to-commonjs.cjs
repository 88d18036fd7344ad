// Jest transform for the ESM-only packages jest.config.ts lets through transformIgnorePatterns
// (jose): TypeScript's transpiler rewrites their import/export to CommonJS, nothing else. Not a
// second ts-jest entry: ts-jest keeps one compiler setup per project whatever each entry asks, and
// the house one (useDefineForClassFields false) moves jose's error-class fields before super().
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const ts = require('typescript');

const compilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  useDefineForClassFields: true,
  inlineSourceMap: true,
};
const ownSource = readFileSync(module.filename);

module.exports = {
  process(sourceText, sourcePath) {
    return {
      code: ts.transpileModule(sourceText, { fileName: sourcePath, compilerOptions }).outputText,
    };
  },
  getCacheKey(sourceText, sourcePath, options) {
    return createHash('sha256')
      .update(ownSource)
      .update(ts.version)
      .update(options.configString)
      .update(sourcePath)
      .update(sourceText)
      .digest('hex');
  },
};
