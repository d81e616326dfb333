/* Live updates for ddz-table pages: plain JavaScript, no build step.
 *
 * A page with #live[data-stream] opens an EventSource. Each "table" event carries a
 * rendered fragment that replaces the table screen (or one venue card). EventSource
 * reconnects by itself and sends the last event id, so the server only resends a
 * screen that changed. Kiosk options: data-zoom on <html>, data-rotate/data-rotation
 * on #live to cycle through tables without reloading the page. After each swap #live
 * fires "ddz:swap", for a page that shows more than the table (the demo's seat panel).
 */
"use strict";
(function () {
  const root = document.documentElement;
  if (root.dataset.zoom) {
    root.style.setProperty("--zoom", root.dataset.zoom);
  }

  document.addEventListener("keydown", function (event) {
    const rel = { ArrowLeft: "prev", ArrowRight: "next" }[event.key];
    const link = rel && document.querySelector("a[rel=" + rel + "]");
    if (link) {
      link.click();
    }
  });

  const live = document.getElementById("live");
  if (!live || !live.dataset.stream || !window.EventSource) {
    return;
  }
  const linkState = document.getElementById("link-state");
  let source = null;

  function keepKiosk(element) {
    if (location.search && element.tagName === "A") {
      const url = new URL(element.getAttribute("href"), location.href);
      element.setAttribute("href", url.pathname + location.search);
    }
  }

  function swap(message) {
    if (live.dataset.view === "table") {
      if (message.table !== live.dataset.table) {
        return;
      }
      live.innerHTML = message.html;
    } else {
      const template = document.createElement("template");
      template.innerHTML = message.html.trim();
      const card = template.content.firstElementChild;
      keepKiosk(card);
      const old = document.getElementById("venue-" + message.table);
      if (old) {
        old.replaceWith(card);
      } else {
        const empty = live.querySelector(".empty");
        if (empty) {
          empty.remove();
        }
        live.appendChild(card);
      }
    }
    live.dataset.key = message.key;
    live.dispatchEvent(new CustomEvent("ddz:swap"));
  }

  function connect(url) {
    if (source) {
      source.close();
    }
    source = new EventSource(url);
    source.addEventListener("table", function (event) {
      swap(JSON.parse(event.data));
    });
    source.onopen = function () {
      linkState.hidden = true;
    };
    source.onerror = function () {
      linkState.hidden = false;
    };
  }

  live.querySelectorAll(".venue-card").forEach(keepKiosk);
  connect(live.dataset.stream);

  const seconds = Number(live.dataset.rotate || 0);
  const tables = (live.dataset.rotation || "").split(",").filter(Boolean);
  if (seconds > 0 && tables.length > 1) {
    window.setInterval(function () {
      const next = tables[(tables.indexOf(live.dataset.table) + 1) % tables.length];
      const url = new URL(live.dataset.stream, location.href);
      url.searchParams.set("table", next);
      live.dataset.table = next;
      live.dataset.stream = url.pathname + url.search;
      history.replaceState(null, "", location.pathname.replace(/[^/]*$/, encodeURIComponent(next)) + location.search);
      document.title = next + document.title.slice(document.title.indexOf(" · "));
      connect(live.dataset.stream);
    }, seconds * 1000);
  }
})();
