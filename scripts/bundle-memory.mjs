// What keeps the server's resident memory down in the bundled CLI's source; docs/performance.md has
// the measurements.
//
// 1. Module factories parsed lazily. esbuild wraps every CommonJS module (and every ES module loaded
//    by a lazy require()) in a factory passed to its __commonJS/__esm helper. Node compiles a
//    CommonJS file as one function, and inside a function V8 parses arrow functions eagerly, so
//    factories written as arrows (as esbuild's identifier minifier writes them) made V8 parse the
//    whole bundle at start: a 34 MB peak of parser memory that glibc's heap kept resident. With
//    identifiers kept (scripts/bundle.mjs), esbuild writes each factory as an object method keyed
//    by the module's path, which V8 parses on its first call. checkLazyFactories() fails the build
//    if a future esbuild writes them otherwise.
// 2. ASCII only. A handful of non-ASCII characters (in regular expressions and templates) made
//    the whole source a two-byte string, twice its size in memory. They become \u escapes, which
//    mean the same in strings, templates and regular expressions.

/** A factory as an object method: `__commonJS({"node_modules/x/index.js"(exports, module) {`. */
const METHOD_FACTORY = /\b__(?:commonJS|esm)\(\{"[^"]+"\([\w$,]*\)\{/g;
/** A factory as an arrow: `__commonJS((exports, module) => {`, parsed eagerly. */
const ARROW_FACTORY = /\b__(?:commonJS|esm)\((?:\([\w$,]*\)|[\w$]+)=>/;

/** Throws unless every module factory in `source` is a method; answers how many there are. */
export function checkLazyFactories(source) {
  const count = source.match(METHOD_FACTORY)?.length ?? 0;
  if (count === 0 || ARROW_FACTORY.test(source)) {
    throw new Error("scripts/bundle-memory.mjs: esbuild's module factories have a new shape, which V8 may parse at start; update checkLazyFactories()");
  }
  return count;
}

/** Every non-ASCII UTF-16 unit as a \u escape. */
export function asciiOnly(source) {
  return source.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
