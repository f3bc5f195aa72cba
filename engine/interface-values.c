/* Making values, functions and properties: part of interface.c's translation unit (included from it). */

/* ---- making values -------------------------------------------------------------------------- */

EMSCRIPTEN_KEEPALIVE JSValue *QTS_NewError(JSContext *ctx) { return heap_value(JS_NewError(ctx)); }

EMSCRIPTEN_KEEPALIVE JSValue *QTS_Throw(JSContext *ctx, JSValueConst *error) {
  return heap_value(JS_Throw(ctx, JS_DupValue(ctx, *error)));
}

EMSCRIPTEN_KEEPALIVE JSValue *QTS_NewObject(JSContext *ctx) { return heap_value(JS_NewObject(ctx)); }

EMSCRIPTEN_KEEPALIVE JSValue *QTS_NewObjectProto(JSContext *ctx, JSValueConst *proto) {
  return heap_value(JS_NewObjectProto(ctx, *proto));
}

EMSCRIPTEN_KEEPALIVE JSValue *QTS_NewArray(JSContext *ctx) { return heap_value(JS_NewArray(ctx)); }

static void free_array_buffer(JSRuntime *rt, void *opaque, void *ptr) { free(ptr); }

/* The new ArrayBuffer owns `buffer` (malloc'd by the host) and frees it. */
EMSCRIPTEN_KEEPALIVE JSValue *QTS_NewArrayBuffer(JSContext *ctx, uint8_t *buffer, size_t length) {
  return heap_value(JS_NewArrayBuffer(ctx, buffer, length, free_array_buffer, NULL, 0));
}

EMSCRIPTEN_KEEPALIVE JSValue *QTS_NewFloat64(JSContext *ctx, double num) {
  return heap_value(JS_NewFloat64(ctx, num));
}

EMSCRIPTEN_KEEPALIVE double QTS_GetFloat64(JSContext *ctx, JSValueConst *value) {
  double d;
  if (JS_ToFloat64(ctx, &d, *value)) {
    JS_FreeValue(ctx, JS_GetException(ctx));
    return NAN;
  }
  return d;
}

EMSCRIPTEN_KEEPALIVE JSValue *QTS_NewString(JSContext *ctx, const char *string) {
  return heap_value(JS_NewString(ctx, string));
}

EMSCRIPTEN_KEEPALIVE const char *QTS_GetString(JSContext *ctx, JSValueConst *value) {
  return JS_ToCString(ctx, *value);
}

/* A copy of an ArrayBuffer's bytes, malloc'd (the host frees it); NULL when it is not one. */
EMSCRIPTEN_KEEPALIVE uint8_t *QTS_GetArrayBuffer(JSContext *ctx, JSValueConst *data) {
  size_t length;
  uint8_t *bytes = JS_GetArrayBuffer(ctx, &length, *data);
  if (!bytes) {
    JS_FreeValue(ctx, JS_GetException(ctx));
    return NULL;
  }
  uint8_t *copy = malloc(length ? length : 1);
  if (copy) memcpy(copy, bytes, length);
  return copy;
}

EMSCRIPTEN_KEEPALIVE size_t QTS_GetArrayBufferLength(JSContext *ctx, JSValueConst *data) {
  size_t length;
  if (!JS_GetArrayBuffer(ctx, &length, *data)) {
    JS_FreeValue(ctx, JS_GetException(ctx));
    return 0;
  }
  return length;
}

EMSCRIPTEN_KEEPALIVE JSValue *QTS_NewSymbol(JSContext *ctx, const char *description, int is_global) {
  JSValue global = JS_GetGlobalObject(ctx);
  JSValue symbol = JS_GetPropertyStr(ctx, global, "Symbol");
  JS_FreeValue(ctx, global);
  JSValue arg = JS_NewString(ctx, description);
  JSValue result;
  if (is_global) {
    JSValue for_fn = JS_GetPropertyStr(ctx, symbol, "for");
    result = JS_Call(ctx, for_fn, symbol, 1, &arg);
    JS_FreeValue(ctx, for_fn);
  } else {
    result = JS_Call(ctx, symbol, JS_UNDEFINED, 1, &arg);
  }
  JS_FreeValue(ctx, arg);
  JS_FreeValue(ctx, symbol);
  return heap_value(result);
}

EMSCRIPTEN_KEEPALIVE const char *QTS_GetSymbolDescriptionOrKey(JSContext *ctx, JSValueConst *value) {
  JSValue description = JS_GetPropertyStr(ctx, *value, "description");
  const char *s = JS_ToCString(ctx, description);
  JS_FreeValue(ctx, description);
  return s;
}

EMSCRIPTEN_KEEPALIVE int QTS_IsGlobalSymbol(JSContext *ctx, JSValueConst *value) {
  if (JS_VALUE_GET_TAG(*value) != JS_TAG_SYMBOL) return 0;
  JSAtomStruct *p = JS_VALUE_GET_PTR(*value);
  return p->atom_type == JS_ATOM_TYPE_GLOBAL_SYMBOL;
}

/* ---- functions ------------------------------------------------------------------------------ */

static JSValue call_host_function(JSContext *ctx, JSValueConst this_val, int argc,
                                  JSValueConst *argv, int magic, JSValue *func_data) {
  uint32_t id = (uint32_t)(uintptr_t)JS_GetOpaque(func_data[0], qts_host_ref_class);
  JSValueConst this_copy = this_val;
  return take_heap_value(qts_host_call_function(ctx, &this_copy, argc, argv, id));
}

/* A function that calls the host's function `id`; the host's reference is freed with it. */
EMSCRIPTEN_KEEPALIVE JSValue *QTS_NewFunction(JSContext *ctx, const char *name, int arg_length,
                                              int is_constructor, uint32_t host_ref_id) {
  JSValue ref = JS_NewObjectClass(ctx, qts_host_ref_class);
  if (JS_IsException(ref)) return heap_value(ref);
  JS_SetOpaque(ref, (void *)(uintptr_t)host_ref_id);
  JSValue fn = JS_NewCFunctionData(ctx, call_host_function, arg_length, 0, 1, &ref);
  JS_FreeValue(ctx, ref);
  if (JS_IsException(fn)) return heap_value(fn);
  JS_DefinePropertyValueStr(ctx, fn, "name", JS_NewString(ctx, name), JS_PROP_CONFIGURABLE);
  if (is_constructor) JS_SetConstructorBit(ctx, fn, 1);
  return heap_value(fn);
}

EMSCRIPTEN_KEEPALIVE JSValueConst *QTS_ArgvGetJSValueConstPointer(JSValueConst *argv, int index) {
  return &argv[index];
}

EMSCRIPTEN_KEEPALIVE JSValue *QTS_Call(JSContext *ctx, JSValueConst *func_obj, JSValueConst *this_obj,
                                       int argc, JSValueConst **argv_ptrs) {
  JSValueConst stack_argv[16];
  JSValueConst *argv = argc <= 16 ? stack_argv : malloc(sizeof(JSValueConst) * argc);
  if (!argv) return heap_value(JS_ThrowOutOfMemory(ctx));
  for (int i = 0; i < argc; i++) argv[i] = *argv_ptrs[i];
  JSValue outer = swap_async_context(ctx, JS_UNDEFINED);
  JSValue result = JS_Call(ctx, *func_obj, *this_obj, argc, argv);
  JS_FreeValue(ctx, swap_async_context(ctx, outer));
  if (argv != stack_argv) free(argv);
  return heap_value(result);
}

/* The pending exception when `maybe_exception` is the exception marker, else NULL. */
EMSCRIPTEN_KEEPALIVE JSValue *QTS_ResolveException(JSContext *ctx, JSValue *maybe_exception) {
  if (!JS_IsException(*maybe_exception)) return NULL;
  return heap_value(JS_GetException(ctx));
}

/* ---- properties ----------------------------------------------------------------------------- */

EMSCRIPTEN_KEEPALIVE JSValue *QTS_GetProp(JSContext *ctx, JSValueConst *this_val,
                                          JSValueConst *prop_name) {
  JSAtom atom = JS_ValueToAtom(ctx, *prop_name);
  if (atom == JS_ATOM_NULL) return heap_value(JS_EXCEPTION);
  JSValue v = JS_GetProperty(ctx, *this_val, atom);
  JS_FreeAtom(ctx, atom);
  return heap_value(v);
}

EMSCRIPTEN_KEEPALIVE JSValue *QTS_GetPropNumber(JSContext *ctx, JSValueConst *this_val, int index) {
  return heap_value(JS_GetPropertyUint32(ctx, *this_val, (uint32_t)index));
}

EMSCRIPTEN_KEEPALIVE void QTS_SetProp(JSContext *ctx, JSValueConst *this_val, JSValueConst *prop_name,
                                      JSValueConst *prop_value) {
  JSAtom atom = JS_ValueToAtom(ctx, *prop_name);
  if (atom == JS_ATOM_NULL) return;
  JS_SetProperty(ctx, *this_val, atom, JS_DupValue(ctx, *prop_value));
  JS_FreeAtom(ctx, atom);
}

EMSCRIPTEN_KEEPALIVE void QTS_DefineProp(JSContext *ctx, JSValueConst *this_val,
                                         JSValueConst *prop_name, JSValueConst *prop_value,
                                         JSValueConst *get, JSValueConst *set, int configurable,
                                         int enumerable, int has_value) {
  JSAtom atom = JS_ValueToAtom(ctx, *prop_name);
  if (atom == JS_ATOM_NULL) return;
  int flags = JS_PROP_HAS_CONFIGURABLE | JS_PROP_HAS_ENUMERABLE;
  if (configurable) flags |= JS_PROP_CONFIGURABLE;
  if (enumerable) flags |= JS_PROP_ENUMERABLE;
  if (has_value) flags |= JS_PROP_HAS_VALUE;
  if (!JS_IsUndefined(*get)) flags |= JS_PROP_HAS_GET;
  if (!JS_IsUndefined(*set)) flags |= JS_PROP_HAS_SET;
  JS_DefineProperty(ctx, *this_val, atom, *prop_value, *get, *set, flags);
  JS_FreeAtom(ctx, atom);
}

#define QTS_GPN_NUMBER_MASK (1 << 6)
#define QTS_STANDARD_COMPLIANT_NUMBER (1 << 7)

/*
 * The own keys of `obj` as an array of value pointers (js_malloc'd, the host frees it with
 * QTS_FreeVoidPointer); NULL on success, else the error. Index keys are numbers with
 * QTS_GPN_NUMBER_MASK, strings with JS_GPN_STRING_MASK (and QTS_STANDARD_COMPLIANT_NUMBER).
 */
EMSCRIPTEN_KEEPALIVE JSValue *QTS_GetOwnPropertyNames(JSContext *ctx, JSValue ***out_ptrs,
                                                      uint32_t *out_len, JSValueConst *obj,
                                                      int flags) {
  JSPropertyEnum *tab;
  uint32_t len;
  int engine_flags = flags & (JS_GPN_STRING_MASK | JS_GPN_SYMBOL_MASK | JS_GPN_PRIVATE_MASK |
                              JS_GPN_ENUM_ONLY);
  if (flags & QTS_GPN_NUMBER_MASK) engine_flags |= JS_GPN_STRING_MASK;
  if (JS_GetOwnPropertyNames(ctx, &tab, &len, *obj, engine_flags) < 0)
    return heap_value(JS_GetException(ctx));
  JSValue **out = js_malloc(ctx, sizeof(JSValue *) * (len ? len : 1));
  uint32_t n = 0;
  for (uint32_t i = 0; out && i < len; i++) {
    JSAtom atom = tab[i].atom;
    int is_index = __JS_AtomIsTaggedInt(atom);
    if (is_index) {
      int as_number = (flags & QTS_GPN_NUMBER_MASK) != 0;
      int as_string = (flags & JS_GPN_STRING_MASK) && (flags & QTS_STANDARD_COMPLIANT_NUMBER);
      if (as_number)
        out[n++] = heap_value(JS_NewUint32(ctx, __JS_AtomToUInt32(atom)));
      else if (as_string || ((flags & JS_GPN_STRING_MASK) && !(flags & QTS_GPN_NUMBER_MASK)))
        out[n++] = heap_value(JS_AtomToString(ctx, atom));
    } else if (JS_AtomIsString(ctx, atom) ? (flags & JS_GPN_STRING_MASK) : 1) {
      out[n++] = heap_value(JS_AtomToValue(ctx, atom));
    }
  }
  js_free_prop_enum(ctx, tab, len);
  if (!out) return heap_value(JS_ThrowOutOfMemory(ctx));
  *out_ptrs = out;
  *out_len = n;
  return NULL;
}

EMSCRIPTEN_KEEPALIVE int QTS_GetLength(JSContext *ctx, uint32_t *out_len, JSValueConst *value) {
  JSValue length = JS_GetPropertyStr(ctx, *value, "length");
  if (JS_IsException(length)) return -1;
  uint32_t n;
  int failed = JS_ToUint32(ctx, &n, length);
  JS_FreeValue(ctx, length);
  if (failed) return -1;
  *out_len = n;
  return 0;
}

