// Transcript page behaviour. Collapsed bodies live in inert <template class="lazy"> elements and
// become live DOM only when opened, searched into or scrolled near, so that a run of ten
// thousand events parses quickly and stays responsive. No inline handlers: the page's
// Content-Security-Policy allows this one script by its hash and nothing else.
(function () {
  "use strict";

  const MAX_MARKS = 10000;
  const timeline = document.querySelector(".tl-main") || document.querySelector("[data-panel=timeline]");
  const toolbar = document.querySelector(".toolbar");
  // Which <template> a fragment is the content of: a node inside an inert template has the
  // fragment as its root, and this leads back to the element that must be made live.
  const owners = new WeakMap();

  function instantiate(template) {
    if (template.parentNode) template.replaceWith(template.content);
  }

  function openFold(details) {
    for (const child of Array.from(details.children)) {
      if (child.tagName === "TEMPLATE" && child.classList.contains("lazy")) instantiate(child);
    }
  }

  function openAncestors(node) {
    for (let n = node.parentElement; n; n = n.parentElement) {
      if (n.tagName === "DETAILS" && !n.open) n.open = true;
    }
  }

  // Make a node that may sit inside (nested) inert templates live, outermost template first.
  function makeLive(node) {
    const chain = [];
    let n = node;
    while (!n.isConnected) {
      const template = owners.get(n.getRootNode());
      if (!template) return false;
      chain.push(template);
      n = template;
    }
    for (let k = chain.length - 1; k >= 0; k -= 1) instantiate(chain[k]);
    openAncestors(node);
    return node.isConnected;
  }

  // Every template under `root`, depth first, with its content registered in `owners`.
  function eachTemplate(root, visit) {
    for (const template of root.querySelectorAll("template")) {
      owners.set(template.content, template);
      if (visit(template) === false) return false;
      if (eachTemplate(template.content, visit) === false) return false;
    }
    return true;
  }

  document.addEventListener(
    "toggle",
    function (event) {
      const target = event.target;
      if (target.tagName === "DETAILS" && target.open) openFold(target);
    },
    true
  );

  // Long lists arrive in chunks that become live as they near the viewport (the timeline) or
  // the outline's visible part. The outline's are no folds: Expand all leaves them be.
  function lazyChunks(selector, root, margin) {
    const chunks = document.querySelectorAll(selector);
    if (!chunks.length) return;
    if (!("IntersectionObserver" in window)) {
      chunks.forEach(function (chunk) { chunk.querySelectorAll(":scope > template").forEach(instantiate); });
      return;
    }
    const observer = new IntersectionObserver(
      function (entries) {
        for (const entry of entries) {
          if (!entry.isIntersecting) continue;
          observer.unobserve(entry.target);
          const template = entry.target.querySelector(":scope > template");
          if (template) instantiate(template);
        }
      },
      { root: root, rootMargin: margin }
    );
    chunks.forEach(function (chunk) { observer.observe(chunk); });
  }
  lazyChunks("[data-chunk]", null, "2000px 0px");
  const outlineBox = document.getElementById("outline");
  lazyChunks("[data-ochunk]", document.getElementById("outline-list"), "600px 0px");

  // The sticky search bar's height, for scroll-margin-top: a target lands below the bar.
  function measureBar() {
    if (toolbar) document.documentElement.style.setProperty("--bar", toolbar.offsetHeight + "px");
  }
  measureBar();
  if ("ResizeObserver" in window && toolbar) new ResizeObserver(measureBar).observe(toolbar);

  // Scroll to an element and keep it there while lazy content above it settles.
  function scrollToElement(el, block) {
    el.scrollIntoView({ block: block });
    let want = el.getBoundingClientRect().top;
    let frames = 0;
    function settle() {
      const top = el.getBoundingClientRect().top;
      if (Math.abs(top - want) > 2) {
        el.scrollIntoView({ block: block });
        want = el.getBoundingClientRect().top;
      }
      frames += 1;
      if (frames < 8) requestAnimationFrame(settle);
    }
    requestAnimationFrame(settle);
  }

  // Expand all: each template's nested templates are expanded inside its inert content first,
  // so the live DOM changes once per top-level template.
  function expandInside(template) {
    const content = template.content;
    for (const inner of content.querySelectorAll("template.lazy")) expandInside(inner);
    for (const details of content.querySelectorAll("details.fold")) details.open = true;
    template.replaceWith(content);
  }

  function expandAll() {
    for (const template of document.querySelectorAll("template.lazy")) {
      if (template.parentNode) expandInside(template);
    }
    document.querySelectorAll("details.fold").forEach(function (d) { d.open = true; });
  }

  function collapseAll() {
    document.querySelectorAll("details.fold").forEach(function (d) { d.open = false; });
  }

  function findById(id) {
    const live = document.getElementById(id);
    if (live) return live;
    let found = null;
    eachTemplate(document, function (template) {
      found = template.content.getElementById(id);
      return found === null;
    });
    return found;
  }

  function goToHash() {
    let id;
    try {
      id = decodeURIComponent(location.hash.slice(1));
    } catch (err) {
      return;
    }
    if (!id) return;
    const target = findById(id);
    if (!target || !makeLive(target)) return;
    const panel = target.closest("[data-panel]");
    if (panel && panel.hidden) showTab(panel.dataset.panel);
    if (hiddenKinds.size && !target.getClientRects().length) {
      hiddenKinds.clear();
      applyFilter();
    }
    document.querySelectorAll(".targeted").forEach(function (el) { el.classList.remove("targeted"); });
    target.classList.add("targeted");
    scrollToElement(target, "start");
  }

  // Search: every match of the term is wrapped in <mark>, in live and inert content alike
  // (marking inert content costs no layout); a fold that holds matches is flagged, and only
  // the match being shown is made live and opened.
  const input = document.getElementById("search");
  const counter = document.getElementById("search-count");
  let marks = [];
  let flagged = [];
  let current = -1;
  let capped = false;

  function clearMarks() {
    const parents = new Set();
    for (const mark of marks) {
      const parent = mark.parentNode;
      if (!parent) continue;
      parent.replaceChild(document.createTextNode(mark.textContent), mark);
      parents.add(parent);
    }
    parents.forEach(function (parent) { parent.normalize(); });
    flagged.forEach(function (el) { el.classList.remove("has-hit"); });
    document.querySelectorAll(".current").forEach(function (el) { el.classList.remove("current"); });
    marks = [];
    flagged = [];
    current = -1;
    capped = false;
  }

  function skipSubtree(walker) {
    for (;;) {
      const next = walker.nextSibling();
      if (next) return next;
      if (!walker.parentNode()) return null;
    }
  }

  // The text nodes under `root` that match, in document order, looking into templates where
  // they stand. Returns false once MAX_MARKS matches are found.
  function collect(root, test, found) {
    // Inert content whose text has no match needs no walk: only its own templates are left.
    if (root.nodeType === 11 && !test.test(root.textContent)) {
      for (const template of root.querySelectorAll("template")) {
        if (!collectTemplate(template, test, found)) return false;
      }
      return true;
    }
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
    let node = walker.nextNode();
    while (node) {
      if (node.nodeType === 3) {
        if (test.test(node.data) && !filteredOut(node)) {
          found.push(node);
          if (found.length >= MAX_MARKS) return false;
        }
      } else if (node.classList.contains("ns")) {
        node = skipSubtree(walker);
        continue;
      } else if (node.classList.contains("turn") && !test.test(node.textContent)) {
        // A live turn (after Expand all) without a match in its text: only its templates.
        for (const template of node.querySelectorAll("template")) {
          if (!collectTemplate(template, test, found)) return false;
        }
        node = skipSubtree(walker);
        continue;
      } else if (node.tagName === "TEMPLATE" && !collectTemplate(node, test, found)) {
        return false;
      }
      node = walker.nextNode();
    }
    return true;
  }

  function collectTemplate(template, test, found) {
    owners.set(template.content, template);
    const before = found.length;
    const more = collect(template.content, test, found);
    const holder = template.parentNode;
    if (found.length > before && holder && holder.tagName === "DETAILS") {
      holder.classList.add("has-hit");
      flagged.push(holder);
    }
    return more;
  }

  function wrap(textNode, pattern) {
    const text = textNode.data;
    const fragment = document.createDocumentFragment();
    let last = 0;
    pattern.lastIndex = 0;
    let match;
    while ((match = pattern.exec(text)) !== null) {
      if (match.index > last) fragment.appendChild(document.createTextNode(text.slice(last, match.index)));
      const mark = document.createElement("mark");
      mark.className = "sh";
      mark.textContent = match[0];
      fragment.appendChild(mark);
      marks.push(mark);
      last = match.index + match[0].length;
      if (marks.length >= MAX_MARKS) break;
    }
    if (last < text.length) fragment.appendChild(document.createTextNode(text.slice(last)));
    textNode.parentNode.replaceChild(fragment, textNode);
  }

  function showHit(index) {
    if (!marks.length) {
      counter.textContent = input.value.trim() ? "no match" : "";
      return;
    }
    document.querySelectorAll(".current").forEach(function (el) { el.classList.remove("current"); });
    current = (index + marks.length) % marks.length;
    const mark = marks[current];
    makeLive(mark);
    mark.classList.add("current");
    const event = mark.closest("[data-ev]");
    if (event) event.classList.add("current");
    scrollToElement(mark, "center");
    counter.textContent = current + 1 + " / " + marks.length + (capped ? "+" : "");
  }

  function search() {
    clearMarks();
    const query = input.value.trim();
    if (!query || !timeline) {
      counter.textContent = "";
      return;
    }
    const source = query.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const found = [];
    capped = !collect(timeline, new RegExp(source, "i"), found);
    const pattern = new RegExp(source, "gi");
    for (const node of found) {
      if (marks.length >= MAX_MARKS) break;
      wrap(node, pattern);
    }
    showHit(0);
  }

  if (input) {
    input.addEventListener("keydown", function (event) {
      if (event.key !== "Enter") return;
      event.preventDefault();
      const query = input.value.trim().toLowerCase();
      if (marks.length && query === input.dataset.last) {
        showHit(current + (event.shiftKey ? -1 : 1));
      } else {
        input.dataset.last = query;
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

  // Tabs: the timeline, the solution and the grader's log, one shown at a time (arrow keys move
  // between the tabs, as ARIA's tab pattern has them).
  const tabs = Array.from(document.querySelectorAll("[data-tab]"));

  function showTab(name) {
    tabs.forEach(function (tab) {
      const on = tab.dataset.tab === name;
      tab.setAttribute("aria-selected", on ? "true" : "false");
      tab.tabIndex = on ? 0 : -1;
    });
    document.querySelectorAll("[data-panel]").forEach(function (panel) {
      panel.hidden = panel.dataset.panel !== name;
    });
    followScroll();
  }

  tabs.forEach(function (tab, index) {
    tab.addEventListener("click", function () { showTab(tab.dataset.tab); });
    tab.addEventListener("keydown", function (event) {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      if (!step) return;
      event.preventDefault();
      const next = tabs[(index + step + tabs.length) % tabs.length];
      showTab(next.dataset.tab);
      next.focus();
    });
  });

  // The filter by kind: a class per hidden kind on the timeline, which the stylesheet reads
  // (inert content included, so a chunk drawn later is filtered too). A turn whose every
  // event is hidden is hidden with them.
  const kindsBox = document.getElementById("kinds");
  const hiddenKinds = new Set();

  function kindOf(event) {
    for (const name of event.classList) {
      if (name.startsWith("k-")) return name === "k-subagent_spawn" ? "subagent" : name.slice(2);
    }
    return "";
  }

  // Whether the filter hides a node, live or inert: inside an event of a hidden kind (but for
  // the subagent folds under it) or inside a subagent's fold while subagents are hidden.
  function filteredOut(node) {
    if (!hiddenKinds.size) return false;
    for (let child = node, n = node.parentNode; n; child = n, n = n.parentNode) {
      if (n.nodeType === 11) {
        n = owners.get(n);
        if (!n) return false;
        continue;
      }
      if (n.nodeType !== 1) continue;
      if (n.hasAttribute("data-ev")) {
        const keptSub = n.classList.contains("with-sub") && child.nodeType === 1 && child.matches("details.sub");
        if (hiddenKinds.has(kindOf(n)) && !keptSub) return true;
      } else if (n.matches("details.sub:not(.branch)") && hiddenKinds.has("subagent")) {
        return true;
      }
    }
    return false;
  }

  function applyFilter() {
    if (!kindsBox || !timeline) return;
    kindsBox.querySelectorAll("[data-kind]").forEach(function (chip) {
      const off = hiddenKinds.has(chip.dataset.kind);
      chip.setAttribute("aria-pressed", off ? "false" : "true");
      timeline.classList.toggle("hide-" + chip.dataset.kind, off);
    });
    timeline.classList.toggle("filtering", hiddenKinds.size > 0);
    document.getElementById("kinds-all").hidden = hiddenKinds.size === 0;
    if (input && input.value.trim()) search();
    followScroll();
  }

  if (kindsBox) {
    kindsBox.addEventListener("click", function (event) {
      const chip = event.target.closest("[data-kind]");
      if (chip) {
        const kind = chip.dataset.kind;
        if (hiddenKinds.has(kind)) hiddenKinds.delete(kind);
        else hiddenKinds.add(kind);
      } else if (event.target.closest("#kinds-all")) {
        hiddenKinds.clear();
      } else {
        return;
      }
      applyFilter();
    });
  }

  // The outline follows the scroll position: the main turn at the top of the timeline (just
  // below the sticky bar) is marked in it and kept in its view; the fold's title names it.
  const outlineList = document.getElementById("outline-list");
  const outlineAt = document.getElementById("outline-at");
  let shownTurn = null;
  let shownLink = null;
  let followPending = false;

  function turnAtTop() {
    if (!timeline || timeline.closest("[hidden]")) return null;
    const box = timeline.getBoundingClientRect();
    const top = Math.max(toolbar ? toolbar.getBoundingClientRect().bottom : 0, box.top, 0) + 4;
    // Between two turns the point falls in a margin: look a little further down.
    for (let y = top; y < Math.min(window.innerHeight, top + 240); y += 12) {
      const hit = document.elementFromPoint(box.left + 1, y);
      const turn = hit && hit.closest(".turn[data-o]");
      if (turn) return turn;
    }
    return null;
  }

  // The outline's line for the main thread's turn at `position`, made live if still inert. Its
  // lines come in chunks as long as the first.
  function outlineLink(position) {
    if (!outlineList) return null;
    const first = outlineList.querySelectorAll(":scope > a.otl");
    if (position < first.length) return first[position];
    const chunk = outlineList.querySelectorAll(":scope > [data-ochunk]")[Math.floor(position / first.length) - 1];
    if (!chunk) return null;
    const template = chunk.querySelector(":scope > template");
    if (template) instantiate(template);
    return chunk.querySelectorAll(":scope > a.otl")[position % first.length] || null;
  }

  function keepInView(link) {
    if (!link || !outlineList || !outlineBox.open) return;
    const box = outlineList.getBoundingClientRect();
    const line = link.getBoundingClientRect();
    if (line.top < box.top || line.bottom > box.bottom) {
      outlineList.scrollTop += line.top - box.top - box.height / 3;
    }
  }

  function followScroll() {
    followPending = false;
    const turn = turnAtTop();
    if (!turn || turn === shownTurn) return;
    shownTurn = turn;
    const link = outlineLink(Number(turn.dataset.o));
    if (shownLink) {
      shownLink.classList.remove("here");
      shownLink.removeAttribute("aria-current");
    }
    shownLink = link;
    if (!link) return;
    link.classList.add("here");
    link.setAttribute("aria-current", "location");
    keepInView(link);
    if (outlineAt) outlineAt.textContent = " \u00b7 at turn " + link.querySelector("b").textContent;
  }

  document.getElementById("expand-all").addEventListener("click", expandAll);
  document.getElementById("collapse-all").addEventListener("click", collapseAll);

  // The outline is a side panel on a wide screen and a fold above the timeline on a narrow
  // one, which closes again once a turn is picked from it.
  if (outlineBox) {
    const wide = window.matchMedia("(min-width: 1100px)");
    outlineBox.open = wide.matches;
    outlineBox.addEventListener("click", function (event) {
      if (event.target.closest("a") && !wide.matches) outlineBox.open = false;
    });
    outlineBox.addEventListener("toggle", function () { keepInView(shownLink); });
  }

  // The summary is a fold a phone shows closed; elsewhere the stylesheet shows it whatever its
  // state, and this opens it for browsers without ::details-content.
  const summaryBox = document.getElementById("summary");
  if (summaryBox) summaryBox.open = !window.matchMedia("(max-width: 640px)").matches;

  window.addEventListener("scroll", function () {
    if (followPending) return;
    followPending = true;
    requestAnimationFrame(followScroll);
  }, { passive: true });
  window.addEventListener("resize", followScroll);
  window.addEventListener("hashchange", goToHash);
  goToHash();
  followScroll();
})();
