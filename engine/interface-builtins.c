/*
 * Built-ins the stock variant's newer QuickJS has and Debian's 2025-04-26 source lacks, written
 * here over the engine's own structures: ArrayBuffer.prototype.transfer, transferToFixedLength and
 * the `detached` getter (ES2024). Part of interface.c's translation unit (included from it).
 */

static JSArrayBuffer *plain_array_buffer(JSContext *ctx, JSValueConst this_val) {
  JSArrayBuffer *abuf = JS_GetOpaque(this_val, JS_CLASS_ARRAY_BUFFER);
  if (!abuf) JS_ThrowTypeError(ctx, "not an ArrayBuffer");
  return abuf;
}

/* A new buffer with the bytes (cut or zero-filled to the new length); this one detached. */
static JSValue array_buffer_transfer(JSContext *ctx, JSValueConst this_val, int argc,
                                     JSValueConst *argv) {
  JSArrayBuffer *abuf = plain_array_buffer(ctx, this_val);
  if (!abuf) return JS_EXCEPTION;
  uint64_t new_length = abuf->byte_length;
  if (argc > 0 && !JS_IsUndefined(argv[0]) && JS_ToIndex(ctx, &new_length, argv[0]))
    return JS_EXCEPTION;
  if (abuf->detached) return JS_ThrowTypeError(ctx, "ArrayBuffer is detached");
  if (new_length > INT32_MAX) return JS_ThrowRangeError(ctx, "invalid array buffer length");
  JSValue out = js_array_buffer_constructor3(ctx, JS_UNDEFINED, new_length, JS_CLASS_ARRAY_BUFFER,
                                             NULL, js_array_buffer_free, NULL, TRUE);
  if (JS_IsException(out)) return out;
  JSArrayBuffer *copy = JS_GetOpaque(out, JS_CLASS_ARRAY_BUFFER);
  size_t n = new_length < (uint64_t)abuf->byte_length ? new_length : abuf->byte_length;
  memcpy(copy->data, abuf->data, n);
  JS_DetachArrayBuffer(ctx, this_val);
  return out;
}

static JSValue array_buffer_detached(JSContext *ctx, JSValueConst this_val) {
  JSArrayBuffer *abuf = plain_array_buffer(ctx, this_val);
  if (!abuf) return JS_EXCEPTION;
  return JS_NewBool(ctx, abuf->detached);
}

static const JSCFunctionListEntry array_buffer_additions[] = {
    JS_CFUNC_DEF("transfer", 0, array_buffer_transfer),
    JS_CFUNC_DEF("transferToFixedLength", 0, array_buffer_transfer),
    JS_CGETSET_DEF("detached", array_buffer_detached, NULL),
};

static void add_async_context_api(JSContext *ctx);

/* Adds the built-ins above (to a context that has typed arrays) and the async context's API. */
static void add_missing_builtins(JSContext *ctx) {
  JSValue proto = ctx->class_proto[JS_CLASS_ARRAY_BUFFER];
  if (JS_IsObject(proto))
    JS_SetPropertyFunctionList(ctx, proto, array_buffer_additions,
                               countof(array_buffer_additions));
  add_async_context_api(ctx);
}

/*
 * The async context (engine/patches/0001-async-context.patch): `__asyncContext.get()` is the value
 * current now, `__asyncContext.set(v)` makes `v` current and returns the one it replaces. Jobs and
 * promise reactions carry the value current when they were made. The prelude takes the object off
 * the global scope and builds AsyncLocalStorage on it.
 */
static JSValue async_context_get(JSContext *ctx, JSValueConst this_val, int argc,
                                 JSValueConst *argv) {
  return JS_DupValue(ctx, ctx->rt->async_context);
}

static JSValue async_context_set(JSContext *ctx, JSValueConst this_val, int argc,
                                 JSValueConst *argv) {
  JSValue previous = ctx->rt->async_context;
  ctx->rt->async_context = JS_DupValue(ctx, argc > 0 ? argv[0] : JS_UNDEFINED);
  return previous;
}

static const JSCFunctionListEntry async_context_functions[] = {
    JS_CFUNC_DEF("get", 0, async_context_get),
    JS_CFUNC_DEF("set", 1, async_context_set),
};

static void add_async_context_api(JSContext *ctx) {
  JSValue api = JS_NewObject(ctx);
  JS_SetPropertyFunctionList(ctx, api, async_context_functions, countof(async_context_functions));
  JSValue global = JS_GetGlobalObject(ctx);
  JS_DefinePropertyValueStr(ctx, global, "__asyncContext", api,
                            JS_PROP_CONFIGURABLE | JS_PROP_WRITABLE);
  JS_FreeValue(ctx, global);
}

/* A call from the host starts with no async context and leaves the caller's as it was. */
static JSValue swap_async_context(JSContext *ctx, JSValue next) {
  JSValue previous = ctx->rt->async_context;
  ctx->rt->async_context = next;
  return previous;
}
