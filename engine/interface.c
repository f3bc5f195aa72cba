/*
 * The platform's C interface to QuickJS: the `QTS_*` functions that quickjs-emscripten-core's FFI
 * calls (their types are `@jitl/quickjs-ffi-types`), written here over QuickJS's own API.
 *
 * Values cross as pointers to heap-allocated JSValues the host owns (freed by
 * QTS_FreeValuePointer); constants (undefined, null, true, false) are static and never freed.
 * Strings cross as NUL-terminated UTF-8: JS_ToCString's buffers (freed by QTS_FreeCString) or
 * malloc'd ones (freed by the host's _free).
 *
 * One translation unit with the engine (quickjs.c is included), so this file may use the engine's
 * own helpers where its public header has no equivalent (strict equality, typeof).
 */
#include "quickjs.c"

/* quickjs.c forbids the C allocator in its own code; values handed to the host use it */
#undef malloc
#undef free
#undef realloc

#include <emscripten.h>

#include "interface-builtins.c"

/* ---- calls into the host (quickjs-emscripten-core's Module.callbacks) ---------------------- */

EM_JS(JSValue *, qts_host_call_function,
      (JSContext * ctx, JSValueConst *this_ptr, int argc, JSValueConst *argv, uint32_t id), {
        return Module['callbacks']['callFunction'](undefined, ctx, this_ptr, argc, argv, id);
      });

EM_JS(int, qts_host_interrupt, (JSRuntime * rt), {
  return Module['callbacks']['shouldInterrupt'](undefined, rt);
});

EM_JS(char *, qts_host_load_module_source, (JSRuntime * rt, JSContext *ctx, const char *name), {
  return Module['callbacks']['loadModuleSource'](undefined, rt, ctx, UTF8ToString(name));
});

EM_JS(char *, qts_host_normalize_module,
      (JSRuntime * rt, JSContext *ctx, const char *base, const char *name), {
        return Module['callbacks']['normalizeModule'](undefined, rt, ctx, UTF8ToString(base),
                                                      UTF8ToString(name));
      });

EM_JS(void, qts_host_free_host_ref, (JSRuntime * rt, uint32_t id), {
  Module['callbacks']['freeHostRef'](undefined, rt, id);
});

/* ---- values on the heap --------------------------------------------------------------------- */

static JSValue *heap_value(JSValue v) {
  JSValue *p = malloc(sizeof(JSValue));
  if (p) *p = v;
  return p;
}

/* A host-returned value pointer as a value, the pointer freed (NULL is undefined). */
static JSValue take_heap_value(JSValue *p) {
  if (!p) return JS_UNDEFINED;
  JSValue v = *p;
  free(p);
  return v;
}

static JSValue qts_undefined = JS_UNDEFINED;
static JSValue qts_null = JS_NULL;
static JSValue qts_false = JS_FALSE;
static JSValue qts_true = JS_TRUE;

EMSCRIPTEN_KEEPALIVE JSValueConst *QTS_GetUndefined(void) { return &qts_undefined; }
EMSCRIPTEN_KEEPALIVE JSValueConst *QTS_GetNull(void) { return &qts_null; }
EMSCRIPTEN_KEEPALIVE JSValueConst *QTS_GetFalse(void) { return &qts_false; }
EMSCRIPTEN_KEEPALIVE JSValueConst *QTS_GetTrue(void) { return &qts_true; }

EMSCRIPTEN_KEEPALIVE void QTS_FreeValuePointer(JSContext *ctx, JSValue *value) {
  JS_FreeValue(ctx, *value);
  free(value);
}

EMSCRIPTEN_KEEPALIVE void QTS_FreeValuePointerRuntime(JSRuntime *rt, JSValue *value) {
  JS_FreeValueRT(rt, *value);
  free(value);
}

EMSCRIPTEN_KEEPALIVE void QTS_FreeVoidPointer(JSContext *ctx, void *ptr) { js_free(ctx, ptr); }

EMSCRIPTEN_KEEPALIVE void QTS_FreeCString(JSContext *ctx, const char *str) {
  JS_FreeCString(ctx, str);
}

EMSCRIPTEN_KEEPALIVE JSValue *QTS_DupValuePointer(JSContext *ctx, JSValueConst *val) {
  return heap_value(JS_DupValue(ctx, *val));
}

/* ---- host references: an object whose finalizer tells the host its id is free ---------------- */

static JSClassID qts_host_ref_class;

static void host_ref_finalizer(JSRuntime *rt, JSValue val) {
  uint32_t id = (uint32_t)(uintptr_t)JS_GetOpaque(val, qts_host_ref_class);
  if (id) qts_host_free_host_ref(rt, id);
}

static JSClassDef host_ref_class_def = {.class_name = "HostRef", .finalizer = host_ref_finalizer};

EMSCRIPTEN_KEEPALIVE JSValue *QTS_NewHostRef(JSContext *ctx, uint32_t id) {
  JSValue obj = JS_NewObjectClass(ctx, qts_host_ref_class);
  if (JS_IsException(obj)) return heap_value(obj);
  JS_SetOpaque(obj, (void *)(uintptr_t)id);
  return heap_value(obj);
}

EMSCRIPTEN_KEEPALIVE uint32_t QTS_GetHostRefId(JSValueConst *value) {
  return (uint32_t)(uintptr_t)JS_GetOpaque(*value, qts_host_ref_class);
}

/* ---- runtimes and contexts ------------------------------------------------------------------ */

static int interrupt_handler(JSRuntime *rt, void *opaque) { return qts_host_interrupt(rt); }

EMSCRIPTEN_KEEPALIVE JSRuntime *QTS_NewRuntime(void) {
  JSRuntime *rt = JS_NewRuntime();
  if (!rt) return NULL;
  if (!qts_host_ref_class) JS_NewClassID(&qts_host_ref_class);
  JS_NewClass(rt, qts_host_ref_class, &host_ref_class_def);
  return rt;
}

EMSCRIPTEN_KEEPALIVE void QTS_FreeRuntime(JSRuntime *rt) { JS_FreeRuntime(rt); }

enum {
  QTS_BASE_OBJECTS = 1 << 0,
  QTS_DATE = 1 << 1,
  QTS_EVAL = 1 << 2,
  QTS_STRING_NORMALIZE = 1 << 3,
  QTS_REGEXP = 1 << 4,
  QTS_REGEXP_COMPILER = 1 << 5,
  QTS_JSON = 1 << 6,
  QTS_PROXY = 1 << 7,
  QTS_MAP_SET = 1 << 8,
  QTS_TYPED_ARRAYS = 1 << 9,
  QTS_PROMISE = 1 << 10,
};

EMSCRIPTEN_KEEPALIVE JSContext *QTS_NewContext(JSRuntime *rt, int intrinsics) {
  if (intrinsics == 0) {
    JSContext *ctx = JS_NewContext(rt);
    if (ctx) add_missing_builtins(ctx);
    return ctx;
  }
  JSContext *ctx = JS_NewContextRaw(rt);
  if (!ctx) return NULL;
  if (intrinsics & QTS_BASE_OBJECTS) JS_AddIntrinsicBaseObjects(ctx);
  if (intrinsics & QTS_DATE) JS_AddIntrinsicDate(ctx);
  if (intrinsics & QTS_EVAL) JS_AddIntrinsicEval(ctx);
  if (intrinsics & QTS_STRING_NORMALIZE) JS_AddIntrinsicStringNormalize(ctx);
  if (intrinsics & QTS_REGEXP) JS_AddIntrinsicRegExp(ctx);
  if (intrinsics & QTS_REGEXP_COMPILER) JS_AddIntrinsicRegExpCompiler(ctx);
  if (intrinsics & QTS_JSON) JS_AddIntrinsicJSON(ctx);
  if (intrinsics & QTS_PROXY) JS_AddIntrinsicProxy(ctx);
  if (intrinsics & QTS_MAP_SET) JS_AddIntrinsicMapSet(ctx);
  if (intrinsics & QTS_TYPED_ARRAYS) JS_AddIntrinsicTypedArrays(ctx);
  if (intrinsics & QTS_PROMISE) JS_AddIntrinsicPromise(ctx);
  JS_AddIntrinsicWeakRef(ctx);
  add_missing_builtins(ctx);
  return ctx;
}

EMSCRIPTEN_KEEPALIVE void QTS_FreeContext(JSContext *ctx) { JS_FreeContext(ctx); }

EMSCRIPTEN_KEEPALIVE void QTS_RuntimeSetMemoryLimit(JSRuntime *rt, int limit) {
  JS_SetMemoryLimit(rt, limit < 0 ? (size_t)-1 : (size_t)limit);
}

EMSCRIPTEN_KEEPALIVE void QTS_RuntimeSetMaxStackSize(JSRuntime *rt, int stack_size) {
  JS_SetMaxStackSize(rt, (size_t)stack_size);
}

#define MEMORY_FIELD(name) JS_SetPropertyStr(ctx, o, #name, JS_NewFloat64(ctx, (double)s.name))

EMSCRIPTEN_KEEPALIVE JSValue *QTS_RuntimeComputeMemoryUsage(JSRuntime *rt, JSContext *ctx) {
  JSMemoryUsage s;
  JS_ComputeMemoryUsage(rt, &s);
  JSValue o = JS_NewObject(ctx);
  if (JS_IsException(o)) return heap_value(o);
  MEMORY_FIELD(malloc_size);
  MEMORY_FIELD(malloc_limit);
  MEMORY_FIELD(memory_used_size);
  MEMORY_FIELD(malloc_count);
  MEMORY_FIELD(memory_used_count);
  MEMORY_FIELD(atom_count);
  MEMORY_FIELD(atom_size);
  MEMORY_FIELD(str_count);
  MEMORY_FIELD(str_size);
  MEMORY_FIELD(obj_count);
  MEMORY_FIELD(obj_size);
  MEMORY_FIELD(prop_count);
  MEMORY_FIELD(prop_size);
  MEMORY_FIELD(shape_count);
  MEMORY_FIELD(shape_size);
  MEMORY_FIELD(js_func_count);
  MEMORY_FIELD(js_func_size);
  MEMORY_FIELD(js_func_code_size);
  MEMORY_FIELD(js_func_pc2line_count);
  MEMORY_FIELD(js_func_pc2line_size);
  MEMORY_FIELD(c_func_count);
  MEMORY_FIELD(array_count);
  MEMORY_FIELD(fast_array_count);
  MEMORY_FIELD(fast_array_elements);
  MEMORY_FIELD(binary_object_count);
  MEMORY_FIELD(binary_object_size);
  return heap_value(o);
}

EMSCRIPTEN_KEEPALIVE char *QTS_RuntimeDumpMemoryUsage(JSRuntime *rt) {
  JSMemoryUsage s;
  JS_ComputeMemoryUsage(rt, &s);
  char *out = malloc(256);
  if (out)
    snprintf(out, 256, "malloc_size %lld, memory_used_size %lld, objects %lld, strings %lld",
             (long long)s.malloc_size, (long long)s.memory_used_size, (long long)s.obj_count,
             (long long)s.str_count);
  return out;
}

EMSCRIPTEN_KEEPALIVE int QTS_RecoverableLeakCheck(void) { return 0; }
EMSCRIPTEN_KEEPALIVE int QTS_BuildIsSanitizeLeak(void) { return 0; }
EMSCRIPTEN_KEEPALIVE int QTS_BuildIsDebug(void) { return 0; }
EMSCRIPTEN_KEEPALIVE int QTS_BuildIsAsyncify(void) { return 0; }
EMSCRIPTEN_KEEPALIVE int QTS_GetDebugLogEnabled(JSRuntime *rt) { return 0; }
EMSCRIPTEN_KEEPALIVE void QTS_SetDebugLogEnabled(JSRuntime *rt, int enabled) {}
EMSCRIPTEN_KEEPALIVE void QTS_TestStringArg(const char *string) {}

EMSCRIPTEN_KEEPALIVE void QTS_RuntimeEnableInterruptHandler(JSRuntime *rt) {
  JS_SetInterruptHandler(rt, interrupt_handler, NULL);
}

EMSCRIPTEN_KEEPALIVE void QTS_RuntimeDisableInterruptHandler(JSRuntime *rt) {
  JS_SetInterruptHandler(rt, NULL, NULL);
}

/* ---- modules -------------------------------------------------------------------------------- */

static JSModuleDef *load_module(JSContext *ctx, const char *name, void *opaque) {
  char *source = qts_host_load_module_source(JS_GetRuntime(ctx), ctx, name);
  if (!source) {
    /* the host threw in the guest already when its loader failed */
    if (!JS_HasException(ctx)) JS_ThrowReferenceError(ctx, "could not load module '%s'", name);
    return NULL;
  }
  JSValue func = JS_Eval(ctx, source, strlen(source), name,
                         JS_EVAL_TYPE_MODULE | JS_EVAL_FLAG_COMPILE_ONLY);
  free(source);
  if (JS_IsException(func)) return NULL;
  /* the module is referenced by the runtime's module list; the compiled value is not needed */
  JSModuleDef *m = JS_VALUE_GET_PTR(func);
  JS_FreeValue(ctx, func);
  return m;
}

static char *normalize_module(JSContext *ctx, const char *base, const char *name, void *opaque) {
  char *normalized = qts_host_normalize_module(JS_GetRuntime(ctx), ctx, base, name);
  if (!normalized) {
    if (!JS_HasException(ctx)) JS_ThrowReferenceError(ctx, "could not resolve module '%s'", name);
    return NULL;
  }
  /* QuickJS frees the name with js_free: copy the host's malloc'd string into its allocator */
  char *copy = js_strdup(ctx, normalized);
  free(normalized);
  return copy;
}

EMSCRIPTEN_KEEPALIVE void QTS_RuntimeEnableModuleLoader(JSRuntime *rt, int use_custom_normalize) {
  JS_SetModuleLoaderFunc(rt, use_custom_normalize ? normalize_module : NULL, load_module, NULL);
}

EMSCRIPTEN_KEEPALIVE void QTS_RuntimeDisableModuleLoader(JSRuntime *rt) {
  JS_SetModuleLoaderFunc(rt, NULL, NULL, NULL);
}

EMSCRIPTEN_KEEPALIVE JSValue *QTS_GetModuleNamespace(JSContext *ctx, JSValueConst *module_func) {
  if (JS_VALUE_GET_TAG(*module_func) != JS_TAG_MODULE)
    return heap_value(JS_ThrowTypeError(ctx, "not a module"));
  return heap_value(JS_GetModuleNamespace(ctx, JS_VALUE_GET_PTR(*module_func)));
}

#include "interface-values.c"
#include "interface-eval.c"
