// A deterministic PRNG (mulberry32) so every run and every repetition sees the same data.

export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** n words from the list, joined by spaces. */
  words(list: readonly string[], n: number): string {
    let out = '';
    for (let i = 0; i < n; i++) out += (i ? ' ' : '') + this.pick(list);
    return out;
  }

  hex(n: number): string {
    let out = '';
    while (out.length < n) out += ((this.next() * 4_294_967_296) >>> 0).toString(16).padStart(8, '0');
    return out.slice(0, n);
  }
}
