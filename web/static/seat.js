/* The demo's seat panel: fetched again after every change of the table.
 *
 * live.js fires "ddz:swap" on #live when the table screen changes; the panel (the
 * hand, the task, the buttons, the referee's words) is then fetched from the server
 * and swapped in, and once when the page loads: live.js may have swapped in a newer
 * table before this script listened. A panel older than the one shown (responses
 * can cross) is dropped, and so is an empty answer (the seat is no longer this
 * browser's; its next move says so, and a reload here could cut a form's answer
 * short). The ticked cards stay ticked while the hand is the same.
 */
"use strict";
(function () {
  const live = document.getElementById("live");
  if (!live || !document.getElementById("seat-panel")) {
    return;
  }

  function ticked(panel) {
    return Array.from(panel.querySelectorAll("input[name=card]"), function (box) {
      return box.checked;
    });
  }

  function refresh() {
    const panel = document.getElementById("seat-panel");
    fetch(panel.dataset.url, { credentials: "same-origin" }).then(function (response) {
      return response.status === 200 ? response.text() : "";
    }).then(function (html) {
      const current = document.getElementById("seat-panel");
      if (!html || !current) {
        return;
      }
      const template = document.createElement("template");
      template.innerHTML = html.trim();
      const fresh = template.content.firstElementChild;
      if (Number(fresh.dataset.seq) < Number(current.dataset.seq)) {
        return;
      }
      if (fresh.dataset.hand === current.dataset.hand) {
        const keep = ticked(current);
        fresh.querySelectorAll("input[name=card]").forEach(function (box, index) {
          box.checked = Boolean(keep[index]);
        });
      }
      current.replaceWith(fresh);
    });
  }

  live.addEventListener("ddz:swap", refresh);
  refresh(); // the table may have changed before this script listened
})();
