// Transcript page behaviour. Collapsed bodies live in inert <template class="lazy"> elements and
// become live DOM only when opened, searched into or scrolled near, so that a run of ten
// thousand events parses quickly and stays responsive. No inline handlers: the page's
// Content-Security-Policy allows this one script by its hash and nothing else.
(function () {
  "use strict";

  function instantiate(template) {
    if (template.parentNode) template.replaceWith(template.content);
  }

  function openFold(details) {
    for (const child of Array.from(details.children)) {
      if (child.tagName === "TEMPLATE" && child.classList.contains("lazy")) instantiate(child);
    }
  }

  // Make a template's content live and open every fold on the way to it.
  function reveal(template) {
    const holder = template.parentElement;
    instantiate(template);
    let node = holder;
    while (node) {
      if (node.tagName === "DETAILS") node.open = true;
      node = node.parentElement;
    }
  }

  function lazyTemplates() {
    return Array.from(document.querySelectorAll("template.lazy"));
  }

  // `textContent` of a fragment skips nested templates' content, so look into them too.
  function fragmentHas(fragment, test) {
    if (test(fragment)) return true;
    for (const inner of fragment.querySelectorAll("template")) {
      if (fragmentHas(inner.content, test)) return true;
    }
    return false;
  }

  function revealWhere(test) {
    let changed = true;
    let rounds = 0;
    while (changed && rounds < 200) {
      changed = false;
      rounds += 1;
      for (const template of lazyTemplates()) {
        if (fragmentHas(template.content, test)) {
          reveal(template);
          changed = true;
        }
      }
    }
  }

  document.addEventListener(
    "toggle",
    function (event) {
      const target = event.target;
      if (target.tagName === "DETAILS" && target.open) openFold(target);
    },
    true
  );

  // Long timelines arrive in chunks that become live as they near the viewport.
  const chunks = document.querySelectorAll("[data-chunk]");
  if ("IntersectionObserver" in window) {
    const observer = new IntersectionObserver(
      function (entries) {
        for (const entry of entries) {
          if (!entry.isIntersecting) continue;
          observer.unobserve(entry.target);
          const template = entry.target.querySelector(":scope > template.lazy");
          if (template) instantiate(template);
        }
      },
      { rootMargin: "2000px 0px" }
    );
    chunks.forEach(function (chunk) { observer.observe(chunk); });
  } else {
    chunks.forEach(function (chunk) { openFold(chunk); });
  }

  function expandAll() {
    let templates = lazyTemplates();
    let rounds = 0;
    while (templates.length && rounds < 200) {
      templates.forEach(instantiate);
      templates = lazyTemplates();
      rounds += 1;
    }
    document.querySelectorAll("details.fold").forEach(function (d) { d.open = true; });
  }

  function collapseAll() {
    document.querySelectorAll("details.fold").forEach(function (d) { d.open = false; });
  }

  function goToHash() {
    let id;
    try {
      id = decodeURIComponent(location.hash.slice(1));
    } catch (err) {
      return;
    }
    if (!id) return;
    if (!document.getElementById(id)) {
      revealWhere(function (fragment) { return fragment.getElementById(id) !== null; });
    }
    const target = document.getElementById(id);
    if (!target) return;
    let node = target.parentElement;
    while (node) {
      if (node.tagName === "DETAILS") node.open = true;
      node = node.parentElement;
    }
    document.querySelectorAll(".targeted").forEach(function (el) { el.classList.remove("targeted"); });
    target.classList.add("targeted");
    target.scrollIntoView({ block: "start" });
  }

  // Search: open the folds whose content matches, then step through the matching events.
  const input = document.getElementById("search");
  const counter = document.getElementById("search-count");
  let hits = [];
  let current = -1;

  function clearHits() {
    hits.forEach(function (el) { el.classList.remove("hit", "current"); });
    hits = [];
    current = -1;
  }

  function showHit(index) {
    if (!hits.length) {
      counter.textContent = input.value ? "no match" : "";
      return;
    }
    if (current >= 0) hits[current].classList.remove("current");
    current = (index + hits.length) % hits.length;
    const el = hits[current];
    el.classList.add("current");
    el.scrollIntoView({ block: "center" });
    counter.textContent = current + 1 + " / " + hits.length;
  }

  function search() {
    clearHits();
    const query = input.value.trim().toLowerCase();
    if (!query) {
      counter.textContent = "";
      return;
    }
    const matches = function (node) { return node.textContent.toLowerCase().includes(query); };
    revealWhere(matches);
    const events = Array.from(document.querySelectorAll("[data-ev]")).filter(matches);
    // Only the innermost matching events: a subagent's spawning event contains its children.
    hits = events.filter(function (el) {
      return !Array.from(el.querySelectorAll("[data-ev]")).some(matches);
    });
    hits.forEach(function (el) { el.classList.add("hit"); });
    showHit(0);
  }

  if (input) {
    input.addEventListener("keydown", function (event) {
      if (event.key !== "Enter") return;
      event.preventDefault();
      if (hits.length && input.value.trim().toLowerCase() === input.dataset.last) {
        showHit(current + (event.shiftKey ? -1 : 1));
      } else {
        input.dataset.last = input.value.trim().toLowerCase();
        search();
      }
    });
    document.getElementById("search-go").addEventListener("click", function () {
      input.dataset.last = input.value.trim().toLowerCase();
      search();
    });
    document.getElementById("search-next").addEventListener("click", function () { showHit(current + 1); });
    document.getElementById("search-prev").addEventListener("click", function () { showHit(current - 1); });
  }

  document.getElementById("expand-all").addEventListener("click", expandAll);
  document.getElementById("collapse-all").addEventListener("click", collapseAll);

  document.querySelectorAll("[data-tab]").forEach(function (button) {
    button.addEventListener("click", function () {
      const name = button.dataset.tab;
      document.querySelectorAll("[data-tab]").forEach(function (b) {
        b.setAttribute("aria-selected", b === button ? "true" : "false");
      });
      document.querySelectorAll("[data-panel]").forEach(function (panel) {
        panel.hidden = panel.dataset.panel !== name;
      });
    });
  });

  window.addEventListener("hashchange", goToHash);
  goToHash();
})();
