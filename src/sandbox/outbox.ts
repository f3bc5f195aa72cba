/**
 * Messages per crossing at most. Measured with a trivial handler under 32 connections (two sandbox
 * workers, 2 cores): one per crossing 15.6k req/s; 2 to 8 about 20-21k; a whole turn's worth
 * (about 11) 15.9k.
 */
export const MAX_BATCH = 4;

/**
 * Messages for the other side of a worker boundary, sent together at the end of the event-loop
 * turn, or as soon as `MAX_BATCH` are waiting: under load one turn produces many, and one crossing
 * instead of one each saves most of the per-message cost on both threads, while small crossings
 * let the other side start on the first messages while this side makes the next ones (a turn's
 * worth at once left each thread waiting on the other). Used in both directions between the pool
 * and its workers.
 */
export class Outbox<M> {
  private msgs: M[] = [];
  private transfer: ArrayBuffer[] = [];
  /** Whom the queued messages belong to (releases, in a worker). */
  private readonly tags = new Set<string>();
  private scheduled = false;

  private readonly send: (msg: M, transfer: ArrayBuffer[]) => void;
  private readonly batch: (msgs: M[]) => M;
  constructor(send: (msg: M, transfer: ArrayBuffer[]) => void, batch: (msgs: M[]) => M) {
    this.send = send;
    this.batch = batch;
  }

  push(msg: M, transfer: ArrayBuffer[] = [], tag?: string): void {
    this.msgs.push(msg);
    for (const t of transfer) this.transfer.push(t);
    if (tag !== undefined) this.tags.add(tag);
    if (this.msgs.length >= MAX_BATCH) return this.flush();
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.flush();
      });
    }
  }

  /** Sends now, unless every queued message is tagged `tag`. */
  flushUnlessOnly(tag: string): void {
    if (this.msgs.length && (this.tags.size !== 1 || !this.tags.has(tag))) this.flush();
  }

  flush(): void {
    const { msgs, transfer } = this;
    if (msgs.length === 0) return;
    this.msgs = [];
    this.transfer = [];
    this.tags.clear();
    this.send(msgs.length === 1 ? msgs[0]! : this.batch(msgs), transfer);
  }
}
