import { describe, expect, it } from 'vitest';
import { EarliestTimer } from './earliest-timer.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('EarliestTimer', () => {
  it('fires once, by the earliest time asked for; a later time keeps it, an earlier one moves it; clear unsets it', async () => {
    let fired = 0;
    const timer = new EarliestTimer(() => fired++);
    timer.by(performance.now() + 60);
    timer.by(performance.now() + 10_000); // kept: 60 ms
    timer.by(performance.now() + 20); // moved earlier
    await sleep(120);
    expect(fired).toBe(1);
    // unset after firing: a later time sets it again
    timer.by(performance.now() + 10);
    timer.clear();
    await sleep(60);
    expect(fired).toBe(1);
    timer.by(performance.now() - 5); // a time passed: at once
    await sleep(30);
    expect(fired).toBe(2);
  });
});
