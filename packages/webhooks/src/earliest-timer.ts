/**
 * One timer that fires by the earliest time it is asked for: asking for a time no earlier
 * than the one already set keeps that one, so a caller that asks on every event (the webhook
 * worker after each cycle, the Node transport for each attempt) sets a timer only when the
 * time moves earlier or the last one fired. Times are `performance.now()` ms.
 */
export class EarliestTimer {
  private handle: ReturnType<typeof setTimeout> | null = null;
  private due = Infinity;

  /**
   * @param fire called when the time comes (the timer is then unset)
   * @param unref whether a set timer leaves the process free to exit (where the runtime has `unref`)
   *
   * @example
   * ```ts
   * const timer = new EarliestTimer(() => console.log('now'));
   * timer.by(performance.now() + 1_000);
   * timer.by(performance.now() + 5_000); // kept: fires in 1 s
   * ```
   */
  constructor(
    private readonly fire: () => void,
    private readonly unref = false,
  ) {}

  /**
   * Fires by `at`: sets the timer unless one is set for no later.
   *
   * @example
   * ```ts
   * timer.by(performance.now() + 250);
   * ```
   */
  by(at: number): void {
    if (this.handle !== null && this.due <= at) return;
    this.clear();
    this.due = at;
    this.handle = setTimeout(() => {
      this.handle = null;
      this.due = Infinity;
      this.fire();
    }, Math.max(0, at - performance.now()));
    if (this.unref) (this.handle as { unref?: () => void }).unref?.();
  }

  /**
   * Unsets the timer.
   *
   * @example
   * ```ts
   * timer.clear();
   * ```
   */
  clear(): void {
    if (this.handle !== null) clearTimeout(this.handle);
    this.handle = null;
    this.due = Infinity;
  }
}
