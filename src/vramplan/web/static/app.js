// vramplan: live results without computing anything here. The script sends the form's query to
// the server, swaps in the server-rendered fragments, and keeps the query in the URL.
"use strict";
(function () {
  const form = document.getElementById("calculator");
  if (!form || !window.fetch || !window.URLSearchParams) return;
  const regions = Array.from(document.querySelectorAll("[data-fragment]"));
  const optimizer = form.elements.namedItem("optimizer");
  const custom = document.querySelector("[data-custom-field]");
  const lang = document.documentElement.lang;
  let sequence = 0;
  let timer = 0;
  let editing = false;
  let pendingPush = false;

  function syncCustom() {
    const isCustom = optimizer.value === "custom";
    custom.hidden = !isCustom;
    custom.querySelector("input").disabled = !isCustom;
  }

  function currentQuery() {
    const query = new URLSearchParams();
    for (const [name, value] of new FormData(form)) query.append(name, String(value).trim());
    return query.toString();
  }

  function fill(query) {
    const values = new URLSearchParams(query);
    for (const element of form.elements) {
      if (element.name && values.has(element.name)) element.value = values.get(element.name);
      else if (element.name && element.name !== "optimizer") element.value = "";
    }
    syncCustom();
  }

  function updateLanguageLinks(query) {
    document.querySelectorAll("[data-lang-switch]").forEach((link) => {
      link.href = link.dataset.langSwitch + (query ? "?" + query : "");
    });
  }

  function showFieldErrors() {
    const messages = {};
    document.querySelectorAll("[data-field-errors] [data-field]").forEach((item) => {
      messages[item.dataset.field] = item.textContent;
    });
    form.querySelectorAll("[data-error-for]").forEach((slot) => {
      const name = slot.dataset.errorFor;
      const message = messages[name] || "";
      slot.textContent = message;
      const input = form.elements.namedItem(name);
      if (input && message) input.setAttribute("aria-invalid", "true");
      else if (input) input.removeAttribute("aria-invalid");
    });
  }

  async function refresh(query) {
    const mine = ++sequence;
    regions.forEach((region) => region.setAttribute("aria-busy", "true"));
    const suffix = (query ? query + "&" : "") + "lang=" + encodeURIComponent(lang);
    try {
      const texts = await Promise.all(regions.map((region) =>
        fetch(region.dataset.fragment + "?" + suffix, { headers: { Accept: "text/html" } })
          .then((response) => response.text())));
      if (mine !== sequence) return;  // a newer query has been sent since
      regions.forEach((region, i) => { region.innerHTML = texts[i]; });
      showFieldErrors();
    } finally {
      if (mine === sequence) regions.forEach((region) => region.removeAttribute("aria-busy"));
    }
  }

  function update(push) {
    const query = currentQuery();
    const url = location.pathname + (query ? "?" + query : "");
    if (url !== location.pathname + location.search) {
      history[push ? "pushState" : "replaceState"]({ query: query }, "", url);
    }
    updateLanguageLinks(query);
    refresh(query);
  }

  form.addEventListener("input", (event) => {
    if (event.target === optimizer) return;
    // The first keystroke of an edit adds a history entry; the next ones update it.
    pendingPush = pendingPush || !editing;
    editing = true;
    clearTimeout(timer);
    timer = setTimeout(() => { update(pendingPush); pendingPush = false; }, 150);
  });
  form.addEventListener("change", (event) => {
    editing = false;
    if (event.target === optimizer) {
      syncCustom();
      clearTimeout(timer);
      update(true);
    }
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    clearTimeout(timer);
    editing = false;
    update(true);
  });
  window.addEventListener("popstate", (event) => {
    const query = event.state && typeof event.state.query === "string"
      ? event.state.query : location.search.slice(1);
    fill(query);
    updateLanguageLinks(query);
    refresh(query);
  });

  syncCustom();
  history.replaceState({ query: currentQuery() }, "", location.href);
})();
