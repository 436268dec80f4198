/* The book's own script (pages that read at every width), loaded on every page after the theme's.
 *
 * Tap to enlarge: a figure, or a widget's picture, that the page shows narrower than its full
 * size (on a phone every figure is: the column is about 360 px, the figures 490-860) opens on
 * a tap or click at that size, in a dialog that scrolls both ways, where its labels read: a
 * figure at the size it was drawn (its smallest text at least 12.5 px, tiling_course.style),
 * a widget's picture at twice its size (drawn at 72 dpi to keep the pages light, its 9 px
 * labels are 18 px there). A tap on the dialog, its close button or Escape closes it. Widget pictures appear
 * when the widget manager draws them, after this script has run, so a click is handled on the
 * document, not on each image.
 *
 * Captions whole: a table of a cell's output that does not fit the column scrolls in its box
 * (site.css), and its caption, as wide as the table, scrolled with it, cut off. Its text is
 * shown above the box instead, wrapped to the column; the caption stays for screen readers. */
(() => {
  "use strict";
  const FIGURES = "article.bd-article figure img, article.bd-article .tc-switch-state img";
  const WIDGET_PICTURE = ".tc-switch-state img";
  const SHRUNK = 0.98;   // shown at less than this fraction of its full size: worth enlarging

  const full = img => img.naturalWidth * (img.matches(WIDGET_PICTURE) ? 2 : 1);
  const shrunk = img => img.naturalWidth > 0 && img.getBoundingClientRect().width < SHRUNK * full(img);

  function enlarge(img) {
    const dialog = document.createElement("dialog");
    dialog.className = "tc-enlarged";
    dialog.setAttribute("aria-label", `${img.alt || "figure"}, at full size`);
    const big = document.createElement("img");
    big.src = img.currentSrc || img.src;
    big.alt = img.alt;
    big.style.width = `${full(img)}px`;
    const close = document.createElement("button");
    close.type = "button";
    close.textContent = "✕";
    close.setAttribute("aria-label", "close");
    dialog.append(close, big);
    dialog.addEventListener("click", () => dialog.close());
    dialog.addEventListener("close", () => dialog.remove());
    document.body.append(dialog);
    dialog.showModal();
  }

  function mark() {
    for (const img of document.querySelectorAll(FIGURES)) {
      img.classList.toggle("tc-enlargeable", shrunk(img));
    }
  }

  function captions() {
    for (const box of document.querySelectorAll("article.bd-article div.cell_output .output.text_html")) {
      const table = box.querySelector(":scope > table");
      if (!table || !table.caption) continue;
      const cut = table.scrollWidth > box.clientWidth + 1;
      let above = box.previousElementSibling;
      if (!(above && above.classList.contains("tc-table-caption"))) {
        if (!cut) continue;
        above = document.createElement("p");
        above.className = "tc-table-caption caption-text";
        above.setAttribute("aria-hidden", "true");
        above.textContent = table.caption.textContent;
        box.before(above);
      }
      above.hidden = !cut;
      table.caption.classList.toggle("tc-caption-above", cut);
    }
  }

  document.addEventListener("click", event => {
    const img = event.target.closest && event.target.closest(FIGURES);
    if (img && shrunk(img)) {
      event.preventDefault();
      enlarge(img);
    }
  });
  // A widget's picture grows with the column (site.css) up to twice its drawn size, as far as
  // its pixels bear; they load when the widget manager draws them, so on any image's load.
  const grow = img => { img.style.width = `min(100%, ${2 * img.naturalWidth}px)`; };
  document.addEventListener("load", event => {
    if (event.target.matches && event.target.matches(`article.bd-article ${WIDGET_PICTURE}`)) {
      grow(event.target);
      mark();
    }
  }, true);

  const layout = () => { mark(); captions(); };
  window.addEventListener("load", layout);
  window.addEventListener("resize", layout);
})();
