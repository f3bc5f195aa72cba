// quickjs-emscripten-core's loader asks the module for its extensions (the WASM memory it runs in)
Module['quickjsEmscriptenInit'] = function () {
  var extensions = { getWasmMemory: function () { return wasmMemory; } };
  Module['quickJSEmscriptenExtensions'] = extensions;
  return extensions;
};
