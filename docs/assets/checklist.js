// The checklist's checkboxes (generator/templates/site/checklist.md.j2): the ticked checks are
// kept in the browser's local storage, by tip id, so they survive a reload and are shared by
// the English and the Chinese page. Without local storage they still tick, for this visit.
function setup() {
  const boxes = Array.prototype.slice.call(
    document.querySelectorAll(".tip-checklist input[type=checkbox][data-check]"));
  if (!boxes.length) return;
  const KEY = "pytorch-tips.checklist";
  const status = document.querySelector(".tip-checklist-status output");
  const reset = document.querySelector(".tip-checklist-reset");

  function read() {
    try {
      const saved = JSON.parse(localStorage.getItem(KEY) || "[]");
      return new Set(Array.isArray(saved) ? saved : []);
    } catch (e) {
      return new Set();
    }
  }

  function write(ticked) {
    try {
      localStorage.setItem(KEY, JSON.stringify(Array.from(ticked)));
    } catch (e) { /* private browsing: the boxes still tick for this visit */ }
  }

  const ticked = read();

  function show() {
    const n = boxes.filter(function (b) { return b.checked; }).length;
    if (status) {
      status.textContent = n ? status.dataset.template.replace("{n}", String(n))
        .replace("{total}", String(boxes.length)) : "";
    }
    if (reset) reset.hidden = n === 0;
  }

  boxes.forEach(function (box) {
    box.checked = ticked.has(box.dataset.check);
    box.addEventListener("change", function () {
      if (box.checked) ticked.add(box.dataset.check);
      else ticked.delete(box.dataset.check);
      write(ticked);
      show();
    });
  });
  if (reset) {
    reset.addEventListener("click", function () {
      boxes.forEach(function (box) {
        box.checked = false;
        ticked.delete(box.dataset.check);
      });
      write(ticked);
      show();
      boxes[0].focus();
    });
  }
  show();
}

setup();
