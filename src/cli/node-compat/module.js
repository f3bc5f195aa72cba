// node:module as the CLI bundles it: unenv's functions, with Node's shape kept: the module's
// CommonJS value and default export is the `Module` function, whose statics are those functions and
// whose prototype has `require` (Next.js reads `require('module').prototype.require` at load to
// hook it). Loading code at run time stays unavailable: `require` throws, naming itself.
import * as unenv from 'unenv/node/module';

export * from 'unenv/node/module';

export function Module(id = '', parent = undefined) {
  this.id = id;
  this.path = '/';
  this.exports = {};
  this.filename = null;
  this.loaded = false;
  this.children = [];
  this.paths = [];
  this.parent = parent;
}
Module.prototype.require = function require(id) {
  return unenv.createRequire('/')(id);
};
for (const [k, v] of Object.entries(unenv))
  if (k !== 'default' && k !== 'Module' && !(k in Module)) Module[k] = v;
Module.Module = Module;

export default Module;
