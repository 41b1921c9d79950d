// Behaviour of every page, beside Material's own:
// - the language switch (Material's header, links with hreflang) keeps the address's query
//   string and fragment, so the composer's flags (?model=gpt&fsdp), the catalog's filters
//   (?helps=multi-gpu) and a playground link (#code=...) survive a change of language; the
//   link is rewritten when it is about to be used, since the page changes its own address;
// - regions that scroll sideways on a narrow screen (Material's table wrappers, the tools'
//   code) can be reached and scrolled with the keyboard (WCAG 2.1.1).

function carryState(link) {
  const url = new URL(link.href, location.href);
  url.search = location.search;
  url.hash = location.hash;
  link.href = url.href;
}

for (const link of document.querySelectorAll("a.md-select__link[hreflang]")) {
  for (const event of ["pointerdown", "focus", "click", "contextmenu"]) {
    link.addEventListener(event, () => carryState(link));
  }
}

const SCROLLERS = ".md-typeset__scrollwrap, .md-typeset pre.tool-code";

function focusable(node) {
  for (const region of node.querySelectorAll(SCROLLERS)) {
    if (!region.hasAttribute("tabindex")) region.tabIndex = 0;
  }
}

// Material wraps the tables after the page's scripts ran, and may do so again.
focusable(document);
new MutationObserver((records) => {
  for (const record of records) {
    for (const node of record.addedNodes) {
      if (node.nodeType === Node.ELEMENT_NODE) {
        if (node.matches(SCROLLERS) && !node.hasAttribute("tabindex")) node.tabIndex = 0;
        focusable(node);
      }
    }
  }
}).observe(document.body, { childList: true, subtree: true });
