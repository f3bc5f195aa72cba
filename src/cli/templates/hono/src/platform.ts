/** The part of the platform's `ctx` this app uses (the whole of it: the platform's API docs). */
export type Row = { id: string; created_at: string; updated_at: string };
export type Collection<T> = {
  create(fields: T): Promise<T & Row>;
  update(id: string, fields: Partial<T>): Promise<T & Row>;
  list(options?: { where?: Partial<T>; limit?: number }): Promise<(T & Row)[]>;
};
export type Ctx = {
  app: { app_id: string; origin: string; release_id: string };
  data: { collection<T>(name: string): Collection<T> };
  secrets: { get(name: string): string | undefined; require(name: string): string };
  jobs: {
    enqueue(
      name: string,
      payload?: unknown,
      options?: { delay_seconds?: number },
    ): Promise<{ job_id: string }>;
  };
  log: Record<
    'debug' | 'info' | 'warn' | 'error',
    (message: string, metadata?: Record<string, unknown>) => void
  >;
};
