/**
 * Messages for the other side of a worker boundary, sent together at the end of the event-loop
 * turn: under load one turn produces many, and one crossing instead of one each saves most of the
 * per-message cost on both threads. Used in both directions between the pool and its workers.
 */
export class Outbox<M> {
  private msgs: M[] = [];
  private transfer: ArrayBuffer[] = [];
  /** Whom the queued messages belong to (releases, in a worker). */
  private readonly tags = new Set<string>();
  private scheduled = false;

  constructor(
    private readonly send: (msg: M, transfer: ArrayBuffer[]) => void,
    private readonly batch: (msgs: M[]) => M,
  ) {}

  push(msg: M, transfer: ArrayBuffer[] = [], tag?: string): void {
    this.msgs.push(msg);
    for (const t of transfer) this.transfer.push(t);
    if (tag !== undefined) this.tags.add(tag);
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
