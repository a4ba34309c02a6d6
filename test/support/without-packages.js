'use strict';
/**
 * Preloaded with `node --require` (NODE_OPTIONS): the packages named in WITHOUT_PACKAGES
 * (comma-separated) look not installed to the process, as in an install that left them out.
 * Resolving one of them, or a file inside it, fails as Node fails for a missing package
 * (MODULE_NOT_FOUND); each `require` of one is also recorded in `globalThis.__withoutPackagesRequired`,
 * so a test can tell "never asked for" from "asked for, and the error swallowed".
 * (A `require.resolve`, which loads nothing, is not recorded.)
 */
const Module = require('node:module');

const names = (process.env.WITHOUT_PACKAGES || '').split(',').map((n) => n.trim()).filter(Boolean);
const required = [];
globalThis.__withoutPackagesRequired = required;

function blocked(request) {
  return names.some((n) => request === n || request.startsWith(`${n}/`));
}

function notFound(request) {
  const err = new Error(`Cannot find module '${request}'\nRequire stack:\n- (test/support/without-packages.js)`);
  err.code = 'MODULE_NOT_FOUND';
  return err;
}

const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (blocked(request)) throw notFound(request);
  return resolveFilename.call(this, request, ...rest);
};

const load = Module._load;
Module._load = function (request, ...rest) {
  if (blocked(request)) {
    required.push(request);
    throw notFound(request);
  }
  return load.call(this, request, ...rest);
};
