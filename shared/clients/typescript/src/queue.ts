/** An unbounded async queue: what a push-driven producer hands to a pull-driven reader (a
 * request stream's messages, a stream's updates). `end()` lets readers finish, `fail()` makes
 * them throw; both stay in force for every later read. */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private waiting: Array<(value: void) => void> = [];
  private ended = false;
  private error: unknown = undefined;

  push(item: T): void {
    if (this.ended) return;
    this.items.push(item);
    this.wake();
  }

  end(): void {
    this.ended = true;
    this.wake();
  }

  fail(error: unknown): void {
    this.error ??= error;
    this.end();
  }

  get size(): number {
    return this.items.length;
  }

  /** The next item; undefined once the queue has ended and is empty. */
  async next(): Promise<T | undefined> {
    for (;;) {
      if (this.items.length > 0) return this.items.shift();
      if (this.error !== undefined) throw this.error;
      if (this.ended) return undefined;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }

  /** Every item waiting now, without waiting for more. */
  drain(): T[] {
    return this.items.splice(0);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      const item = await this.next();
      if (item === undefined) return;
      yield item;
    }
  }

  private wake(): void {
    for (const resolve of this.waiting.splice(0)) resolve();
  }
}
