/**
 * The slots of the Float64Array a sandbox worker and its pool share (one SharedArrayBuffer per
 * worker): what the pool reads without a message, for placement and for the watchdog.
 */
/** When guest code started running, epoch ms (0: idle). */
export const RUNNING_SINCE = 0;
/** The id of the last invocation the worker began. */
export const LAST_BEGUN = 1;
/** The id of the invocation whose guest code is running now (0: none). */
export const RUNNING_ID = 2;
/** 1 while a blank instance (a spare) is ready for a release new to the worker. */
export const SPARE_READY = 3;
/** The worker's thread id (0: unknown), for the watchdog to read its CPU time. */
export const THREAD_ID = 4;
/** How many of the invocations sent to the worker it has begun. */
export const BEGUN_COUNT = 5;

/** Outbound fetches the worker's apps made that answered, and that failed or were refused. */
export const FETCHES_OK = 6;
export const FETCHES_FAILED = 7;

/** Memory the worker's warm instances were last measured to hold, and how many there are. */
export const INSTANCE_BYTES = 8;
export const INSTANCES = 9;
/** The worker's WebAssembly memory, which only grows (every instance's heap lives in it). */
export const WASM_BYTES = 10;

export const SHARED_STATE_BYTES = 11 * Float64Array.BYTES_PER_ELEMENT;
