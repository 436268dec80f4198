/* Draws the page's widgets when a widget's cell comes within a screen of the window, or
 * before the page is printed; until then a page with widgets weighs what one without does.
 * book/_ext/widgets_on_demand.py puts this script where myst-nb put the widget manager
 * (require.js and embed-amd.js, beside this file), with their attributes (embed-amd.js reads
 * data-jupyter-widgets-cdn from any script that carries it), and writes the widgets' state
 * beside the page. On a reader's approach this fetches that state into its script and draws
 * the widgets with switch.js (10 kB: the models of the book's switches), or, where the state
 * holds a model switch.js does not draw, loads the widget manager (3.7 MB), which draws them
 * all. */
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
    Promise.all([fetchState(), add(beside("switch.js"))]).then(() => {
      const states = [...document.querySelectorAll(STATE)].map(s => JSON.parse(s.textContent));
      if (states.length === 1 && window.tcSwitch && window.tcSwitch.draws(states[0])) {
        window.tcSwitch.render(states[0]);
        return null;
      }
      return add(beside("require.js")).then(() => add(beside("embed-amd.js")));
    }).catch(e => console.error("widgets:", e));
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
