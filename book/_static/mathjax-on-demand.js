/* MathJax, loaded when a formula comes within a screen of the window (so that a
 * page weighs at most about 2 MB at load). _config.yml's mathjax_path names this file, so Sphinx puts it
 * where it put MathJax: on the pages with math (and on the root page, whose toctree holds
 * them), after myst's `window.MathJax = {...}` configuration. It loads the site's MathJax 3
 * in parts (mathjax/parts/: the TeX input, the CommonHTML output and its font data, the
 * assistive MathML for screen readers; 0.75 MB, without tex-chtml.js's 0.4 MB context menu)
 * when the first `.math` element nears the window, or before the page is printed. A page
 * without formulas (the intro) loads none of it.
 *
 * Until then window.MathJax is the configuration. jupyterquiz, which draws its quizzes when
 * the page loads, asks for MathJax half a second later: it typesets with MathJax.typeset when
 * MathJax.version is 3.x, does nothing when there is no version, and fetches MathJax from a
 * CDN when there is a version and no typeset(), which is what MathJax is like between its
 * first script and its being ready. So typeset() and typesetPromise() are there from the
 * moment MathJax's object is made (caught as it is assigned to window.MathJax), and typeset
 * once MathJax is ready; MathJax's own startup then puts its real ones in their place. On
 * the configuration, before any loading, the same two functions start the loading (a widget
 * that draws a formula asks for it that way). */
(() => {
  "use strict";
  const me = document.currentScript;
  const ROOT = new URL("mathjax/", me.src).href;
  const config = window.MathJax && typeof window.MathJax === "object" ? window.MathJax : {};
  config.loader = Object.assign({load: ["input/tex", "output/chtml", "a11y/assistive-mml"]}, config.loader);
  config.chtml = Object.assign({fontURL: ROOT + "output/chtml/fonts/woff-v2"}, config.chtml);
  let started = false;
  let observer = null;

  function later(mathjax, name) {
    return function (elements) {
      const startup = mathjax.startup;
      const ready = startup && startup.promise ? startup.promise : Promise.resolve();
      return ready.then(() => {
        if (mathjax[name] !== stubs.get(mathjax)[name]) return mathjax[name](elements);
      });
    };
  }
  const stubs = new WeakMap();
  function withStubs(mathjax) {
    const own = {typeset: later(mathjax, "typesetPromise"), typesetPromise: later(mathjax, "typesetPromise")};
    stubs.set(mathjax, own);
    Object.assign(mathjax, own);
  }

  // MathJax's first script replaces the configuration by its own object (keeping the
  // configuration as its .config): the stubs go on that object as it is made.
  let current = config;
  try {
    Object.defineProperty(window, "MathJax", {
      configurable: true,
      enumerable: true,
      get: () => current,
      set: value => {
        current = value;
        if (value && typeof value === "object" && value.version && !Object.prototype.hasOwnProperty.call(value, "typeset"))
          withStubs(value);
      },
    });
  } catch (e) {   // (a `var MathJax` cannot be redefined: MathJax still loads, without the stubs)
    window.MathJax = config;
  }

  function load() {
    if (started) return;
    started = true;
    if (observer) observer.disconnect();
    const script = document.createElement("script");
    script.src = ROOT + "parts/startup.js";
    script.async = true;
    document.head.append(script);
  }
  // On the configuration (non-enumerable, so that MathJax does not read them as settings).
  for (const name of ["typeset", "typesetPromise"]) {
    Object.defineProperty(config, name, {
      configurable: true,
      writable: true,
      value: elements => {
        load();
        return new Promise(resolve => {
          const wait = () => {
            const mathjax = window.MathJax;
            if (mathjax !== config && mathjax.startup && mathjax.startup.promise)
              resolve(mathjax.startup.promise.then(() => mathjax.typesetPromise(elements)));
            else setTimeout(wait, 50);
          };
          wait();
        });
      },
    });
  }

  function watch() {
    const formulas = document.querySelectorAll(".math");
    if (!formulas.length) return;
    // A screen ahead, so that the formula is typeset by the time the reader gets there.
    observer = new IntersectionObserver(seen => seen.some(e => e.isIntersecting) && load(),
                                        {rootMargin: "100% 0px"});
    formulas.forEach(f => observer.observe(f));
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", watch);
  else watch();
  window.addEventListener("beforeprint", load);
})();
