/* The book's own script (issue 43, item 3), loaded on every page after the theme's.
 *
 * Tap to enlarge: a figure, or a widget's picture, that the page shows narrower than it was
 * drawn (on a phone every figure is: the column is about 360 px, the figures 490-860) opens
 * on a tap or click at its full size, in a dialog that scrolls both ways, so that its labels
 * read at the size they were drawn (at least 12.5 px for the book's figures, tiling_course.
 * style). A tap on the dialog, its close button or Escape closes it. Widget pictures appear
 * when the widget manager draws them, after this script has run, so a click is handled on the
 * document, not on each image.
 *
 * Captions whole: a table of a cell's output that does not fit the column scrolls in its box
 * (site.css), and its caption, as wide as the table, scrolled with it, cut off. Its text is
 * shown above the box instead, wrapped to the column; the caption stays for screen readers. */
(() => {
  "use strict";
  const FIGURES = "article.bd-article figure img, article.bd-article .tc-switch-state img";
  const SHRUNK = 0.98;   // shown at less than this fraction of its drawn width: worth enlarging

  const shrunk = img => img.naturalWidth > 0 && img.getBoundingClientRect().width < SHRUNK * img.naturalWidth;

  function enlarge(img) {
    const dialog = document.createElement("dialog");
    dialog.className = "tc-enlarged";
    dialog.setAttribute("aria-label", `${img.alt || "figure"}, at full size`);
    const big = document.createElement("img");
    big.src = img.currentSrc || img.src;
    big.alt = img.alt;
    big.style.width = `${img.naturalWidth}px`;
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
  const layout = () => { mark(); captions(); };
  window.addEventListener("load", layout);
  window.addEventListener("resize", layout);
})();
