/**
 * @peculiar/x509 loads tsyringe, which refuses to start without a Reflect metadata polyfill. The
 * x509 library uses no decorator metadata itself (its injectables take no constructor arguments),
 * so the three functions tsyringe calls are enough; this saves a dependency for a few lines.
 * Imported for its side effect before @peculiar/x509 (see ./x509.ts).
 */
type MetadataReflect = typeof Reflect & {
  getMetadata?: (key: unknown, target: object) => unknown;
  getOwnMetadata?: (key: unknown, target: object) => unknown;
  defineMetadata?: (key: unknown, value: unknown, target: object) => void;
};

const R = Reflect as MetadataReflect;
if (!R.getMetadata) {
  const store = new WeakMap<object, Map<unknown, unknown>>();
  R.defineMetadata = (key, value, target) => {
    const own = store.get(target) ?? new Map<unknown, unknown>();
    own.set(key, value);
    store.set(target, own);
  };
  R.getOwnMetadata = (key, target) => store.get(target)?.get(key);
  R.getMetadata = (key, target) => {
    for (let t: object | null = target; t; t = Object.getPrototypeOf(t)) {
      const own = store.get(t);
      if (own?.has(key)) return own.get(key);
    }
    return undefined;
  };
}

export {};
