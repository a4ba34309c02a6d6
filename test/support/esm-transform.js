/**
 * Jest (on Node 20) cannot require() an ES module, and Nest 12 ships only ES modules. This
 * transform turns such a package's files into CommonJS for the tests: TypeScript's own
 * transpileModule, with `import.meta.url` as the file's URL. Node itself loads them natively
 * (require(esm), Node 20.19+), so only the tests go through here.
 */
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const ts = require('typescript');

const options = { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true, allowJs: true };
const self = createHash('sha1').update(readFileSync(__filename)).update(ts.version).digest('hex');

module.exports = {
  process(source, filename) {
    // An ES module may declare its own `require` (createRequire(import.meta.url)); in CommonJS
    // that name is the module wrapper's parameter, so the module's own one is renamed.
    const renamed = /\b(?:const|let|var)\s+require\b/.test(source) ? source.replace(/\brequire\b/g, '__esmRequire') : source;
    const code = renamed.replace(/\bimport\.meta\.url\b/g, "require('node:url').pathToFileURL(__filename).href");
    return { code: ts.transpileModule(code, { fileName: filename, compilerOptions: options }).outputText };
  },
  getCacheKey(source, filename) {
    return createHash('sha1').update(self).update('\0').update(filename).update('\0').update(source).digest('hex');
  },
};
