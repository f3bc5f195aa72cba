/** How a typed route is described: its response, JSON body and query (`never`: none). */
import type * as v from 'valibot';

export type Out<S extends v.GenericSchema> = v.InferOutput<S>;
export type In<S extends v.GenericSchema> = v.InferInput<S>;
/** An operation: what it answers on success, the JSON body it takes and its query (`never`: none). */
export type Op<Response, Body = never, Query = never> = {
  response: Response;
  body: Body;
  query: Query;
};
