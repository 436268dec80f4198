/* Loads the widget manager (require.js, then embed-amd.js, both beside this file) when a
 * widget's cell comes within a screen of the window, or before the page is printed; until
 * then a page with widgets weighs what one without does; the widgets' state, which the
 * extension writes beside the page, is fetched with them. book/_ext/widgets_on_demand.py puts
 * this script where myst-nb put those two, with their attributes (embed-amd.js reads
 * data-jupyter-widgets-cdn from any script that carries it). */
(() => {
  "use strict";
  const me = document.currentScript;
  const beside = name => new URL(name, me.src).href;
  const VIEWS = 'script[type="application/vnd.jupyter.widget-view+json"]';
  const STATE = 'script[type="application/vnd.jupyter.widget-state+json"]';
  let observer = null;
  let started = false;

  function add(src) {
    return new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = src;
      script.onload = resolve;
      script.onerror = reject;
      document.head.append(script);
    });
  }

  // The widgets' state, written beside the page (book/_ext/widgets_on_demand.py), into the
  // script the manager reads it from.
  function fetchState() {
    const empty = [...document.querySelectorAll(STATE)].filter(s => s.dataset.src && !s.textContent.trim());
    return Promise.all(empty.map(s => fetch(new URL(s.dataset.src, location.href))
      .then(r => (r.ok ? r.text() : Promise.reject(new Error(`${s.dataset.src}: HTTP ${r.status}`))))
      .then(text => { s.textContent = text; })));
  }

  function load() {
    if (started) return;
    started = true;
    if (observer) observer.disconnect();
    Promise.all([fetchState(), add(beside("require.js"))]).then(() => add(beside("embed-amd.js")))
      .catch(e => console.error("widgets:", e));
  }

  function watch() {
    const cells = [...document.querySelectorAll(VIEWS)].map(s => s.closest(".cell") || s.parentElement);
    if (!cells.length) return;
    // A screen ahead, so that the widget is drawn by the time the reader gets there.
    observer = new IntersectionObserver(seen => seen.some(e => e.isIntersecting) && load(),
                                        {rootMargin: "100% 0px"});
    cells.forEach(cell => observer.observe(cell));
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", watch);
  else watch();
  window.addEventListener("beforeprint", load);
})();
