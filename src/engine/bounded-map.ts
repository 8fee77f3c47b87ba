/**
 * A Map that holds at most `maxSize` entries: setting a new key when full drops the entry set
 * longest ago. For the in-memory caches and tables whose keys come from requests (tokens, SQL
 * texts, policy versions), so that hostile traffic cannot make them grow without end.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(readonly maxSize: number) {
    super();
  }

  override set(key: K, value: V): this {
    // Re-setting moves a key to the young end, so the oldest entry is the one set longest ago.
    if (this.has(key)) this.delete(key);
    else if (this.size >= this.maxSize) this.delete(this.keys().next().value as K);
    return super.set(key, value);
  }
}
