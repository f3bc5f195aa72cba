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

/* Adds the built-ins above to a context that has typed arrays. */
static void add_missing_builtins(JSContext *ctx) {
  JSValue proto = ctx->class_proto[JS_CLASS_ARRAY_BUFFER];
  if (JS_IsObject(proto))
    JS_SetPropertyFunctionList(ctx, proto, array_buffer_additions,
                               countof(array_buffer_additions));
}
