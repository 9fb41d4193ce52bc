/** Places named blocks of u32 words one after another (each block 4-word aligned, 16 bytes). */
export class WordLayout<Name extends string> {
  private readonly offsets = new Map<Name, number>();
  private cursor = 0;

  add(name: Name, words: number): this {
    this.cursor = Math.ceil(this.cursor / 4) * 4;
    this.offsets.set(name, this.cursor);
    this.cursor += words;
    return this;
  }

  /** Word offset of a block. */
  at(name: Name): number {
    const o = this.offsets.get(name);
    if (o === undefined) throw new RangeError(`WordLayout.at: no block ${name}`);
    return o;
  }

  /** Total size in bytes, rounded up to 256 (at least 256: WebGPU buffers may not be empty when bound). */
  get bytes(): number {
    return Math.max(256, Math.ceil((this.cursor * 4) / 256) * 256);
  }

  entries(): [Name, number][] {
    return [...this.offsets.entries()];
  }
}
