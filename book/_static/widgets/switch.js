/* The book's widgets drawn without the widget manager (3.7 MB, where this is 10 kB).
 *
 * Every widget of the book is a switch (course/tiling_course/switch.py): toggle buttons
 * linked (jslink) to nested tabs that hold every state drawn at build time, so drawing one
 * needs eight of ipywidgets' models: VBox, HTML, ToggleButtons, Tab, Link and their layout
 * and style models. @jupyter-widgets/html-manager draws them with all of ipywidgets, Lumino
 * and require.js: 3.7 MB, which a phone fetched on reaching a widget. This file draws those
 * models from the page's embedded widget state as the manager does (the same elements and
 * classes: .widget-subarea before each view's script, .widget-toggle-button.mod-active,
 * .widget-html-content, the models' _dom_classes, the tab bars left out since the switch's
 * own style hides them) and runs the links both ways, as the manager's Link does. 10 kB.
 *
 * widgets/on-demand.js calls it when a reader nears a widget: window.tcSwitch.draws(state)
 * says whether every model of the state is one of those; if one is not (a widget the book
 * does not have yet), on-demand.js loads the full manager instead, as before. */
(() => {
  "use strict";
  const VIEWS = 'script[type="application/vnd.jupyter.widget-view+json"]';
  const MODELS = new Set(["VBoxModel", "HBoxModel", "BoxModel", "HTMLModel", "ToggleButtonsModel", "TabModel",
                          "LinkModel", "LayoutModel", "HTMLStyleModel", "ToggleButtonsStyleModel",
                          "DescriptionStyleModel"]);
  // ipywidgets 8's look for these widgets (its widgets.css, the values it computes to).
  const CSS = `
.tc-widgets.widget-box {display: flex; box-sizing: border-box; margin: 0; overflow: auto; color: #000;}
.tc-widgets.widget-vbox {flex-direction: column;}
.tc-widgets.widget-hbox {flex-direction: row;}
.tc-widgets.widget-html {display: flex; flex-direction: row; align-items: baseline; box-sizing: border-box;
  margin: 2px; font-size: 13px; line-height: 1.65; color: #000;}
.tc-widgets.widget-html > .widget-html-content {flex: 1 1 auto; line-height: 28px; align-self: stretch; min-width: 0;}
.tc-widgets .widget-label {display: inline-block; box-sizing: border-box; height: 28px; line-height: 28px;
  font-size: 13px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; vertical-align: baseline;}
.tc-widgets.widget-html > .widget-label {width: 80px; flex: 0 0 auto; margin-right: 8px; text-align: right;}
.tc-widgets.widget-toggle-buttons {display: block; line-height: 28px; color: #000;}
.tc-widgets .jupyter-button {display: inline-block; box-sizing: border-box; height: 28px; line-height: 28px;
  margin: 0 2px; padding: 0 10px; border: 0; border-radius: 0; font-family: inherit; font-size: 13px;
  background: #eee; color: rgba(0, 0, 0, 0.8); text-align: center; white-space: nowrap; overflow: hidden;
  text-overflow: ellipsis; vertical-align: baseline; cursor: pointer; box-shadow: none;}
.tc-widgets .jupyter-button:hover {box-shadow: 0 2px 2px 0 rgba(0, 0, 0, 0.14), 0 3px 1px -2px rgba(0, 0, 0, 0.2),
  0 1px 5px 0 rgba(0, 0, 0, 0.12);}
.tc-widgets .jupyter-button.mod-active, .tc-widgets .jupyter-button:active {background: #bdbdbd;
  box-shadow: 0 4px 5px 0 rgba(0, 0, 0, 0.14), 0 1px 10px 0 rgba(0, 0, 0, 0.12), 0 2px 4px -1px rgba(0, 0, 0, 0.2);}
.tc-widgets .jupyter-button:focus-visible {outline: 1px solid #64b5f6; outline-offset: 1px;}
.tc-widgets.widget-tab {display: flex; flex-direction: column; box-sizing: border-box; margin: 2px; overflow: visible;}
.tc-widgets.widget-tab > .widget-tab-contents {box-sizing: border-box; overflow: auto;}
.tc-widgets .tc-hidden {display: none !important;}
`;

  const idOf = ref => (typeof ref === "string" && ref.startsWith("IPY_MODEL_") ? ref.slice(10) : null);

  class Model {
    constructor(name, state) {
      this.name = name;
      this.state = state;
      this.listeners = [];
    }
    get(key) { return this.state[key]; }
    set(key, value) {
      if (this.state[key] === value) return;
      this.state[key] = value;
      this.listeners.forEach(listen => listen(key, value));
    }
    on(listen) { this.listeners.push(listen); }
  }

  function draws(state) {
    const models = state && state.state ? Object.values(state.state) : [];
    return models.length > 0 && models.every(m => MODELS.has(m.model_name));
  }

  function create(tag, classes, parent) {
    const el = document.createElement(tag);
    if (classes) el.className = classes;
    if (parent) parent.append(el);
    return el;
  }

  function render(state) {
    if (!document.getElementById("tc-widgets-style")) {
      const style = create("style");
      style.id = "tc-widgets-style";
      style.textContent = CSS;
      document.head.append(style);
    }
    const models = new Map(Object.entries(state.state).map(([id, m]) => [id, new Model(m.model_name, m.state)]));
    const model = ref => models.get(idOf(ref));

    for (const m of models.values()) {
      if (m.name !== "LinkModel") continue;
      const [sourceRef, sourceKey] = m.get("source") || [];
      const [targetRef, targetKey] = m.get("target") || [];
      const source = model(sourceRef), target = model(targetRef);
      if (!source || !target) continue;
      target.set(targetKey, source.get(sourceKey));
      source.on((key, value) => key === sourceKey && target.set(targetKey, value));
      target.on((key, value) => key === targetKey && source.set(sourceKey, value));
    }

    function decorate(el, m) {
      el.classList.add("lm-Widget", "jupyter-widgets", "tc-widgets");
      (m.get("_dom_classes") || []).forEach(c => el.classList.add(c));
      const layout = model(m.get("layout"));
      if (layout) {
        for (const [key, value] of Object.entries(layout.state)) {
          if (!key.startsWith("_") && value !== null && value !== undefined && value !== "")
            el.style.setProperty(key.replace(/_/g, "-"), value);
        }
      }
      const tip = m.get("tooltip") || m.get("description_tooltip");
      if (tip) el.title = tip;
      return el;
    }

    function label(m, parent) {
      const el = create("label", "widget-label", parent);
      const text = m.get("description") || "";
      if (m.get("description_allow_html")) el.innerHTML = text;
      else el.textContent = text;
      if (!text) el.style.display = "none";
      const style = model(m.get("style"));
      if (style && style.get("description_width")) el.style.width = style.get("description_width");
      return el;
    }

    function view(ref) {
      const m = model(ref);
      if (!m) return create("div");
      switch (m.name) {
        case "VBoxModel": case "HBoxModel": case "BoxModel": {
          const kind = {VBoxModel: "widget-vbox", HBoxModel: "widget-hbox", BoxModel: ""}[m.name];
          const el = decorate(create("div", `lm-Panel widget-container widget-box ${kind}`), m);
          (m.get("children") || []).forEach(child => el.append(view(child)));
          return el;
        }
        case "HTMLModel": {
          const el = decorate(create("div", "widget-inline-hbox widget-html"), m);
          label(m, el);
          const content = create("div", "widget-html-content", el);
          const style = model(m.get("style"));
          if (style) {
            if (style.get("font_size")) content.style.fontSize = style.get("font_size");
            if (style.get("text_color")) content.style.color = style.get("text_color");
            if (style.get("background")) el.style.background = style.get("background");
          }
          content.innerHTML = m.get("value") || "";
          m.on(key => { if (key === "value") content.innerHTML = m.get("value") || ""; });
          return el;
        }
        case "ToggleButtonsModel": {
          const el = decorate(create("div", "widget-toggle-buttons"), m);
          label(m, el);
          const group = create("div", "", el);
          const style = model(m.get("style"));
          const tips = m.get("tooltips") || [];
          const buttons = (m.get("_options_labels") || []).map((text, i) => {
            const button = create("button", "widget-toggle-button jupyter-button", group);
            button.type = "button";
            button.value = String(i);
            button.textContent = text;
            if (tips[i]) button.title = tips[i];
            if (m.get("button_style")) button.classList.add(`mod-${m.get("button_style")}`);
            if (style && style.get("button_width")) button.style.width = style.get("button_width");
            if (style && style.get("font_weight")) button.style.fontWeight = style.get("font_weight");
            button.disabled = !!m.get("disabled");
            button.addEventListener("click", () => m.set("index", i));
            return button;
          });
          const show = () => buttons.forEach((b, i) => {
            b.classList.toggle("mod-active", i === m.get("index"));
            b.setAttribute("aria-pressed", String(i === m.get("index")));
          });
          show();
          m.on(key => key === "index" && show());
          return el;
        }
        case "TabModel": {
          const el = decorate(create("div", "lm-Panel widget-container widget-tab"), m);
          const contents = create("div", "widget-tab-contents", el);
          const pages = (m.get("children") || []).map(child => contents.appendChild(view(child)));
          const show = () => pages.forEach((p, i) => p.classList.toggle("tc-hidden", i !== m.get("selected_index")));
          show();
          m.on(key => key === "selected_index" && show());
          return el;
        }
        default:
          return create("div");
      }
    }

    for (const script of document.querySelectorAll(VIEWS)) {
      let spec;
      try { spec = JSON.parse(script.textContent); } catch (e) { continue; }
      if (!models.has(spec.model_id) || !script.parentElement) continue;
      const area = create("div", "widget-subarea");
      script.parentElement.insertBefore(area, script);
      area.append(view("IPY_MODEL_" + spec.model_id));
    }
  }

  window.tcSwitch = {draws, render};
})();
