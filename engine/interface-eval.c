/* Inspecting values, promises and jobs, evaluating code: part of interface.c's translation unit (included from it). */

/* ---- inspecting values ---------------------------------------------------------------------- */

/* typeof, malloc'd (the host frees it). */
EMSCRIPTEN_KEEPALIVE char *QTS_Typeof(JSContext *ctx, JSValueConst *value) {
  JSAtom atom = js_operator_typeof(ctx, *value);
  const char *name = JS_AtomToCString(ctx, atom);
  char *out = strdup(name ? name : "unknown");
  JS_FreeCString(ctx, name);
  return out;
}

EMSCRIPTEN_KEEPALIVE int QTS_IsEqual(JSContext *ctx, JSValueConst *a, JSValueConst *b, int op) {
  JSStrictEqModeEnum mode = op == 1 ? JS_EQ_SAME_VALUE : op == 2 ? JS_EQ_SAME_VALUE_ZERO : JS_EQ_STRICT;
  return js_strict_eq2(ctx, JS_DupValue(ctx, *a), JS_DupValue(ctx, *b), mode);
}

static JSValue error_as_object(JSContext *ctx, JSValueConst error) {
  JSValue o = JS_NewObject(ctx);
  static const char *fields[] = {"name", "message", "stack"};
  for (int i = 0; i < 3; i++) {
    JSValue v = JS_GetPropertyStr(ctx, error, fields[i]);
    if (JS_IsException(v)) {
      JS_FreeValue(ctx, JS_GetException(ctx));
      continue;
    }
    if (!JS_IsUndefined(v)) JS_SetPropertyStr(ctx, o, fields[i], v);
    else JS_FreeValue(ctx, v);
  }
  return o;
}

/* The value as JSON (an error as its name, message and stack), else as a string; the host frees
 * it with QTS_FreeCString. */
EMSCRIPTEN_KEEPALIVE const char *QTS_Dump(JSContext *ctx, JSValueConst *obj) {
  JSValue target = JS_IsError(ctx, *obj) ? error_as_object(ctx, *obj) : JS_DupValue(ctx, *obj);
  JSValue json = JS_JSONStringify(ctx, target, JS_UNDEFINED, JS_UNDEFINED);
  JS_FreeValue(ctx, target);
  if (JS_IsException(json)) JS_FreeValue(ctx, JS_GetException(ctx));
  if (JS_IsString(json)) {
    const char *s = JS_ToCString(ctx, json);
    JS_FreeValue(ctx, json);
    if (s) return s;
  } else {
    JS_FreeValue(ctx, json);
  }
  const char *s = JS_ToCString(ctx, *obj);
  if (!s) {
    JS_FreeValue(ctx, JS_GetException(ctx));
    JSValue fallback = JS_NewString(ctx, "[value]");
    s = JS_ToCString(ctx, fallback);
    JS_FreeValue(ctx, fallback);
  }
  return s;
}

EMSCRIPTEN_KEEPALIVE JSValue *QTS_GetGlobalObject(JSContext *ctx) {
  return heap_value(JS_GetGlobalObject(ctx));
}

/* ---- promises and jobs ---------------------------------------------------------------------- */

EMSCRIPTEN_KEEPALIVE JSValue *QTS_NewPromiseCapability(JSContext *ctx, JSValue **resolve_funcs_out) {
  JSValue funcs[2];
  JSValue promise = JS_NewPromiseCapability(ctx, funcs);
  if (JS_IsException(promise)) return heap_value(promise);
  resolve_funcs_out[0] = heap_value(funcs[0]);
  resolve_funcs_out[1] = heap_value(funcs[1]);
  return heap_value(promise);
}

EMSCRIPTEN_KEEPALIVE int QTS_PromiseState(JSContext *ctx, JSValueConst *promise) {
  return JS_PromiseState(ctx, *promise);
}

EMSCRIPTEN_KEEPALIVE JSValue *QTS_PromiseResult(JSContext *ctx, JSValueConst *promise) {
  return heap_value(JS_PromiseResult(ctx, *promise));
}

EMSCRIPTEN_KEEPALIVE int QTS_IsJobPending(JSRuntime *rt) { return JS_IsJobPending(rt); }

/*
 * Runs up to `max_jobs` pending jobs (-1: all). The number run, or the error a job threw; the
 * context of the last job run is written to `last_job_context` (NULL when none ran).
 */
EMSCRIPTEN_KEEPALIVE JSValue *QTS_ExecutePendingJob(JSRuntime *rt, int max_jobs,
                                                    JSContext **last_job_context) {
  JSContext *pctx = NULL;
  int executed = 0;
  *last_job_context = NULL;
  while (max_jobs < 0 || executed < max_jobs) {
    int status = JS_ExecutePendingJob(rt, &pctx);
    if (status == 0) break;
    if (status < 0) {
      *last_job_context = pctx;
      return heap_value(JS_GetException(pctx));
    }
    *last_job_context = pctx;
    executed++;
  }
  return heap_value(JS_NewFloat64(pctx, executed));
}

/* ---- evaluating code ------------------------------------------------------------------------ */

static JSValue return_namespace(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv,
                                int magic, JSValue *func_data) {
  return JS_DupValue(ctx, func_data[0]);
}

static JSValue eval_code(JSContext *ctx, const char *js_code, size_t js_code_length,
                         const char *filename, int detect_module, int eval_flags);

/* Evaluation from the host starts with no async context, as a call does (QTS_Call). */
EMSCRIPTEN_KEEPALIVE JSValue *QTS_Eval(JSContext *ctx, const char *js_code, size_t js_code_length,
                                       const char *filename, int detect_module, int eval_flags) {
  JSValue outer = swap_async_context(ctx, JS_UNDEFINED);
  JSValue result = eval_code(ctx, js_code, js_code_length, filename, detect_module, eval_flags);
  JS_FreeValue(ctx, swap_async_context(ctx, outer));
  return heap_value(result);
}

static JSValue evaluate_module(JSContext *ctx, JSValue func);

static JSValue eval_code(JSContext *ctx, const char *js_code, size_t js_code_length,
                         const char *filename, int detect_module, int eval_flags) {
  if (detect_module && JS_DetectModule(js_code, js_code_length)) eval_flags |= JS_EVAL_TYPE_MODULE;
  if ((eval_flags & JS_EVAL_TYPE_MASK) != JS_EVAL_TYPE_MODULE)
    return JS_Eval(ctx, js_code, js_code_length, filename, eval_flags);
  JSValue func = JS_Eval(ctx, js_code, js_code_length, filename,
                         eval_flags | JS_EVAL_FLAG_COMPILE_ONLY);
  if (JS_IsException(func) || (eval_flags & JS_EVAL_FLAG_COMPILE_ONLY)) return func;
  return evaluate_module(ctx, func);
}

/* Evaluates a compiled, resolved module (takes `func`): its namespace, or a promise of it when the
   module awaits at top level. */
static JSValue evaluate_module(JSContext *ctx, JSValue func) {
  JSModuleDef *m = JS_VALUE_GET_PTR(func);
  JSValue evaluated = JS_EvalFunction(ctx, func); /* takes `func` */
  if (JS_IsException(evaluated)) return evaluated;
  JSValue ns = JS_GetModuleNamespace(ctx, m);
  if (JS_IsException(ns)) {
    JS_FreeValue(ctx, evaluated);
    return ns;
  }
  switch (JS_PromiseState(ctx, evaluated)) {
  case JS_PROMISE_FULFILLED:
    JS_FreeValue(ctx, evaluated);
    return ns;
  case JS_PROMISE_REJECTED: {
    JSValue reason = JS_PromiseResult(ctx, evaluated);
    JS_FreeValue(ctx, evaluated);
    JS_FreeValue(ctx, ns);
    return JS_Throw(ctx, reason);
  }
  case JS_PROMISE_PENDING: {
    JSValue resolve = JS_NewCFunctionData(ctx, return_namespace, 0, 0, 1, &ns);
    JS_FreeValue(ctx, ns);
    JSValue then = JS_GetPropertyStr(ctx, evaluated, "then");
    JSValue chained = JS_Call(ctx, then, evaluated, 1, (JSValueConst *)&resolve);
    JS_FreeValue(ctx, then);
    JS_FreeValue(ctx, resolve);
    JS_FreeValue(ctx, evaluated);
    return chained;
  }
  default: /* not a promise: the engine gave the result itself */
    JS_FreeValue(ctx, ns);
    return evaluated;
  }
}

/* ---- module bytecode -------------------------------------------------------------------------
   Made by the platform from a release's source, in a context that compiled its modules
   (QTS_Eval with JS_EVAL_FLAG_COMPILE_ONLY, which also compiles what the entry imports), and read
   back only from the platform's own storage: QuickJS's bytecode is not safe to load from anyone
   else. A pack is, for each module, its length as 4 bytes (little-endian) and its bytecode. */

EMSCRIPTEN_KEEPALIVE uint8_t *QTS_WriteModules(JSContext *ctx, uint32_t *out_length) {
  DynBuf pack;
  dbuf_init(&pack);
  struct list_head *el;
  list_for_each(el, &ctx->loaded_modules) {
    JSModuleDef *m = list_entry(el, JSModuleDef, link);
    /* compiled, not yet linked: a linked module's function is a closure, not bytecode */
    if (JS_VALUE_GET_TAG(m->func_obj) != JS_TAG_FUNCTION_BYTECODE) continue;
    JSValue value = JS_NewModuleValue(ctx, m);
    size_t length;
    uint8_t *bytes = JS_WriteObject(ctx, &length, value, JS_WRITE_OBJ_BYTECODE);
    JS_FreeValue(ctx, value);
    if (!bytes) {
      dbuf_free(&pack);
      return NULL;
    }
    uint32_t n = (uint32_t)length;
    dbuf_put(&pack, (const uint8_t *)&n, 4);
    dbuf_put(&pack, bytes, length);
    js_free(ctx, bytes);
  }
  if (dbuf_error(&pack)) {
    dbuf_free(&pack);
    JS_ThrowOutOfMemory(ctx);
    return NULL;
  }
  *out_length = (uint32_t)pack.size;
  return pack.buf; /* the C allocator's (cutils' dbuf): the host frees it with _free */
}

/* Reads a pack's modules into the context and evaluates the one named `entry`, as QTS_Eval
   evaluates a module's source: its namespace, or a promise of it. */
EMSCRIPTEN_KEEPALIVE JSValue *QTS_EvalModules(JSContext *ctx, const uint8_t *pack, uint32_t length,
                                              const char *entry) {
  JSValue outer = swap_async_context(ctx, JS_UNDEFINED);
  JSValue found = JS_UNDEFINED, result;
  uint32_t at = 0;
  while (at < length) {
    uint32_t n;
    if (length - at < 4 || (memcpy(&n, pack + at, 4), n > length - at - 4)) {
      result = JS_ThrowInternalError(ctx, "module bytecode is cut short");
      goto done;
    }
    at += 4;
    JSValue m = JS_ReadObject(ctx, pack + at, n, JS_READ_OBJ_BYTECODE);
    at += n;
    if (JS_IsException(m)) {
      result = m;
      goto done;
    }
    char name[256];
    if (JS_VALUE_GET_TAG(m) == JS_TAG_MODULE && JS_IsUndefined(found) &&
        !strcmp(JS_AtomGetStr(ctx, name, sizeof(name),
                              ((JSModuleDef *)JS_VALUE_GET_PTR(m))->module_name),
                entry))
      found = m;
    else
      JS_FreeValue(ctx, m); /* the context's module list holds it */
  }
  if (JS_IsUndefined(found)) {
    result = JS_ThrowReferenceError(ctx, "no module '%s' in the bytecode", entry);
  } else if (JS_ResolveModule(ctx, found) < 0) {
    JS_FreeValue(ctx, found);
    found = JS_UNDEFINED;
    result = JS_EXCEPTION;
  } else {
    result = evaluate_module(ctx, found); /* takes `found` */
    found = JS_UNDEFINED;
  }
done:
  JS_FreeValue(ctx, found);
  JS_FreeValue(ctx, swap_async_context(ctx, outer));
  return heap_value(result);
}

/* ---- script bytecode: the platform's own code (prelude, chunks), compiled once per thread ------ */

/* A compiled script (QTS_Eval with JS_EVAL_FLAG_COMPILE_ONLY) as bytecode, in a buffer the host
   frees with _free. */
EMSCRIPTEN_KEEPALIVE uint8_t *QTS_WriteBytecode(JSContext *ctx, JSValueConst *compiled,
                                                uint32_t *out_length) {
  if (JS_VALUE_GET_TAG(*compiled) != JS_TAG_FUNCTION_BYTECODE) {
    JS_ThrowTypeError(ctx, "not compiled code");
    return NULL;
  }
  size_t length;
  uint8_t *bytes = JS_WriteObject(ctx, &length, *compiled, JS_WRITE_OBJ_BYTECODE);
  if (!bytes) return NULL;
  uint8_t *out = malloc(length ? length : 1);
  if (out) memcpy(out, bytes, length);
  js_free(ctx, bytes);
  if (!out) {
    JS_ThrowOutOfMemory(ctx);
    return NULL;
  }
  *out_length = (uint32_t)length;
  return out;
}

/* Runs a script's bytecode (QTS_WriteBytecode's) as QTS_Eval runs its source: its completion value. */
EMSCRIPTEN_KEEPALIVE JSValue *QTS_EvalBytecode(JSContext *ctx, const uint8_t *bytes,
                                               uint32_t length) {
  JSValue outer = swap_async_context(ctx, JS_UNDEFINED);
  JSValue result = JS_ReadObject(ctx, bytes, length, JS_READ_OBJ_BYTECODE);
  if (!JS_IsException(result)) {
    if (JS_VALUE_GET_TAG(result) == JS_TAG_FUNCTION_BYTECODE)
      result = JS_EvalFunction(ctx, result); /* takes the function */
    else {
      JS_FreeValue(ctx, result);
      result = JS_ThrowTypeError(ctx, "not a script's bytecode");
    }
  }
  JS_FreeValue(ctx, swap_async_context(ctx, outer));
  return heap_value(result);
}

/* ---- QuickJS's binary object format (values only: never bytecode from the host) ------------- */

EMSCRIPTEN_KEEPALIVE JSValue *QTS_bjson_encode(JSContext *ctx, JSValueConst *val) {
  size_t length;
  uint8_t *bytes = JS_WriteObject(ctx, &length, *val, 0);
  if (!bytes) return heap_value(JS_EXCEPTION);
  JSValue buffer = JS_NewArrayBufferCopy(ctx, bytes, length);
  js_free(ctx, bytes);
  return heap_value(buffer);
}

EMSCRIPTEN_KEEPALIVE JSValue *QTS_bjson_decode(JSContext *ctx, JSValueConst *data) {
  size_t length;
  uint8_t *bytes = JS_GetArrayBuffer(ctx, &length, *data);
  if (!bytes) return heap_value(JS_EXCEPTION);
  return heap_value(JS_ReadObject(ctx, bytes, length, 0));
}
