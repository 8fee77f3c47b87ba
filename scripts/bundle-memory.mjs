// Two rewrites of the bundled CLI's source that keep the server's resident memory down. Both keep
// the code's meaning; docs/performance.md has the measurements.
//
// 1. Module factories as function expressions. esbuild wraps every CommonJS module (and every ES
//    module loaded by a lazy require()) in a factory passed to its __commonJS/__esm helper; minified,
//    a factory is an arrow function. Node compiles a CommonJS file as one function, and inside a
//    function V8 parses arrow functions eagerly (it can only defer those whose enclosing scopes are
//    all top-level), so the whole bundle was parsed at start: a 34 MB peak of parser memory that
//    glibc's heap kept resident afterwards. A function expression is parsed lazily, on its first
//    call. The factories' top-level `this` is already rewritten by esbuild (`exports` or `void 0`).
// 2. ASCII only. A handful of non-ASCII characters (in regular expressions and templates) made
//    the whole 5 MB source a two-byte string: 11 MB, where one byte per character is 5.5 MB. They
//    become \u escapes, which mean the same in strings, templates and regular expressions.

/** The names esbuild's minifier gave its __commonJS and __esm helpers in `source`. */
function helperNames(source) {
  const cjs = /var ([\w$]+)=\(([\w$]+),([\w$]+)\)=>\(\)=>\(\3\|\|\2\(\(\3=\{exports:\{\}\}\)\.exports,\3\),\3\.exports\)/.exec(source);
  const esm = /var ([\w$]+)=\(([\w$]+),([\w$]+)\)=>\(\)=>\(\2&&\(\3=\2\(\2=0\)\),\3\)/.exec(source);
  if (!cjs || !esm) {
    throw new Error('scripts/bundle-memory.mjs: esbuild\'s __commonJS/__esm helpers have a new shape; update helperNames()');
  }
  return { cjs: cjs[1], esm: esm[1] };
}

const escapeName = (name) => name.replace(/\$/g, '\\$');

/** Rewrites `H((a,b)=>{`, `H(a=>{` and `H(()=>{` after a helper H into `H(function(a,b){`. */
export function lazyFactories(source) {
  const { cjs, esm } = helperNames(source);
  let count = 0;
  for (const helper of [cjs, esm]) {
    const call = new RegExp(`(?<![\\w$.])${escapeName(helper)}\\((?:\\(([\\w$,]*)\\)|([\\w$]+))=>\\{`, 'g');
    source = source.replace(call, (_, list, single) => {
      count++;
      return `${helper}(function(${list ?? single}){`;
    });
  }
  if (count === 0) throw new Error('scripts/bundle-memory.mjs: no module factory found to rewrite');
  return { source, count };
}

/** Every non-ASCII UTF-16 unit as a \u escape. */
export function asciiOnly(source) {
  return source.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
