/** A seeded random source (mulberry32): the same seed gives the same run, step for step. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0 || 0x9e3779b9;
  }

  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("pick from nothing");
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** One of the keys, by weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    // Two passes over the keys, no entries array: called at every edit and every round.
    let total = 0;
    for (const key in weights) total += weights[key];
    let r = this.next() * total;
    let last: K | undefined;
    for (const key in weights) {
      if ((r -= weights[key]) < 0) return key;
      last = key;
    }
    if (last === undefined) throw new Error("weighted from nothing");
    return last;
  }
}
