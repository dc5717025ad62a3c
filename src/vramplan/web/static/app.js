// vramplan: live results without computing anything here. The script sends the form's query to
// the server, swaps in the server-rendered fragments, and keeps the query in the URL.
"use strict";
(function () {
  const form = document.getElementById("calculator");
  if (!form || !window.fetch || !window.URLSearchParams) return;
  const regions = Array.from(document.querySelectorAll("[data-fragment]"));
  const optimizer = form.elements.namedItem("optimizer");
  const model = form.elements.namedItem("model");
  const params = form.elements.namedItem("params");
  const modelNames = new Set(Array.from(document.querySelectorAll("#models option"),
    (option) => option.value));
  const custom = document.querySelector("[data-custom-field]");
  const lang = document.documentElement.lang;
  let sequence = 0;
  let timer = 0;
  let editing = false;
  let pendingPush = false;

  function syncCustom() {
    if (!optimizer || !custom) return;  // only the main page has the custom value
    const isCustom = optimizer.value === "custom";
    custom.hidden = !isCustom;
    custom.querySelector("input").disabled = !isCustom;
  }

  function currentQuery() {
    const query = new URLSearchParams();
    for (const [name, value] of new FormData(form)) {
      const text = String(value).trim();
      const input = form.elements.namedItem(name);
      const byDefault = input && input.dataset && input.dataset.default;  // fields at their
      if (byDefault !== undefined && text === byDefault) continue;  // default stay out of the URL
      if (name !== "model" || text) query.append(name, text);  // no empty model in the URL
    }
    return query.toString();
  }

  function fill(query) {
    const values = new URLSearchParams(query);
    for (const element of form.elements) {
      if (element.type === "checkbox" || element.type === "radio") {  // a box per value
        element.checked = values.getAll(element.name).includes(element.value);
        continue;
      }
      if (element.name && values.has(element.name)) element.value = values.get(element.name);
      else if (element.name && element.dataset.default !== undefined) element.value = element.dataset.default;
      else if (element.name && element.name !== "optimizer") element.value = "";
    }
    syncCustom();
  }

  function updateLanguageLinks(query) {
    document.querySelectorAll("[data-lang-switch]").forEach((link) => {
      link.href = link.dataset.langSwitch + (query ? "?" + query : "");
    });
  }

  function applyFieldValues() {
    // A picked model's exact count, as the server read it, goes into the params field (unless
    // the user has since cleared the model to type a count).
    if (!model || !model.value.trim()) return;
    document.querySelectorAll("[data-field-values] [data-field]").forEach((item) => {
      const input = form.elements.namedItem(item.dataset.field);
      if (input) input.value = item.textContent;
    });
  }

  function showFieldErrors() {
    const messages = {};
    document.querySelectorAll("[data-field-errors] [data-field]").forEach((item) => {
      messages[item.dataset.field] = item.textContent;
    });
    document.querySelectorAll("[data-error-for]").forEach((slot) => {
      const name = slot.dataset.errorFor;
      const message = messages[name] || "";
      slot.textContent = message;
      const named = form.elements.namedItem(name);
      const input = named && named.setAttribute ? named : null;  // not a group of checkboxes
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
      applyFieldValues();
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

  // Inputs outside the form element (form="calculator") belong to it too.
  document.addEventListener("input", (event) => {
    if (event.target.form !== form || event.target.tagName === "SELECT") return;
    if (event.target === model && !modelNames.has(model.value.trim()) && model.value) return;
    if (event.target === params && model && model.value) model.value = "";  // typed N wins
    // The first keystroke of an edit adds a history entry; the next ones update it.
    pendingPush = pendingPush || !editing;
    editing = true;
    clearTimeout(timer);
    timer = setTimeout(() => { update(pendingPush); pendingPush = false; }, 150);
  });
  document.addEventListener("change", (event) => {
    if (event.target.form !== form) return;
    editing = false;
    if (event.target === optimizer || event.target === model || event.target.tagName === "SELECT") {
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
  // A server-rendered "use this value" link (works without JavaScript as a plain link).
  document.addEventListener("click", (event) => {
    const link = event.target.closest && event.target.closest("a[data-fill]");
    const input = link && document.getElementById(link.dataset.fill);
    if (!input) return;
    event.preventDefault();
    input.value = link.dataset.value;
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

  // The config.json form: a picked file is read into the text area (no parsing here), and the
  // current inputs travel with it.
  const configForm = document.getElementById("config-form");
  if (configForm) {
    const file = configForm.querySelector("input[type=file]");
    configForm.querySelectorAll("[data-config-file]").forEach((element) => { element.hidden = false; });
    file.addEventListener("change", () => {
      if (file.files.length) file.files[0].text().then((text) => { configForm.elements.config.value = text; });
    });
    configForm.addEventListener("submit", () => {
      configForm.querySelectorAll("[data-carry]").forEach((hidden) => {
        const source = form.elements.namedItem(hidden.dataset.carry);
        hidden.value = source && !source.disabled ? source.value : "";
      });
    });
  }

  syncCustom();
  history.replaceState({ query: currentQuery() }, "", location.href);
})();
