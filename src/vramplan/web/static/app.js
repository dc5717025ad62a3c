// vramplan: live results without computing anything here. The script sends the form's query to
// the server, swaps in the server-rendered panels, and keeps the query in the URL.
"use strict";
(function () {
  const form = document.getElementById("calculator");
  if (!form || !window.fetch || !window.URLSearchParams) return;
  const liveUrl = form.dataset.live;
  const regions = Array.from(document.querySelectorAll("[data-panel]"));
  const status = document.querySelector("[data-live-status]");
  const optimizer = form.elements.namedItem("optimizer");
  const model = form.elements.namedItem("model");
  const params = form.elements.namedItem("params");
  const modelNames = new Set(Array.from(document.querySelectorAll("#models option"),
    (option) => option.value));
  const custom = document.querySelector("[data-custom-field]");
  const lang = document.documentElement.lang;
  const painted = new Map();  // region -> the HTML it was last given: unchanged panels stay
  let sequence = 0;
  let inFlight = null;
  let timer = 0;
  let editing = false;
  let pendingPush = false;
  const DEBOUNCE_MS = 80;  // a key every 80 ms or faster is one edit: one request at its end

  function enable(container, on) {
    container.hidden = !on;
    container.querySelectorAll("input, select").forEach((input) => { input.disabled = !on; });
  }

  function syncShown() {
    // Fields that only count for some choices: the custom figure, the LoRA settings.
    if (optimizer && custom) enable(custom, optimizer.value === "custom");
    document.querySelectorAll("[data-shown-when]").forEach((container) => {
      enable(container, shownWhen(container.dataset.shownWhen));
    });
  }

  function shownWhen(spec) {
    // "method:lora qlora|method:dpo grpo;policy:lora": any group whose every condition holds
    return spec.split("|").some((group) => group.split(";").every((condition) => {
      const [name, values] = condition.split(":");
      const chooser = form.elements.namedItem(name);
      return !!chooser && values.split(" ").includes(chooser.value);
    }));
  }

  function currentQuery() {
    const values = new Map();
    for (const [name, value] of new FormData(form)) {
      if (!values.has(name)) values.set(name, []);
      values.get(name).push(String(value).trim());
    }
    const query = new URLSearchParams();
    const modelSet = model && model.value.trim() !== "";
    for (const [name, list] of values) {
      const filled = list.filter((value) => value !== "");
      const input = form.elements.namedItem(name);
      const group = document.querySelector(`fieldset[id="${name}"][data-default]`);
      const byDefault = group ? group.dataset.default
        : (input && input.dataset ? input.dataset.default : undefined);
      if (byDefault !== undefined && filled.join(",") === byDefault) continue;  // out of the URL
      if (name === "model" && !filled.length) continue;  // no empty model in the URL
      if (name === "params" && modelSet) continue;  // the model's exact count replaces it
      if (!filled.length) query.append(name, "");  // `lora_targets=`: no box ticked
      filled.forEach((value) => query.append(name, value));
    }
    return query.toString();
  }

  function fill(query) {
    const values = new URLSearchParams(query);
    const listed = (name) => values.getAll(name).flatMap((value) => value.split(/[,;]/))
      .map((value) => value.trim());
    for (const element of form.elements) {
      if (!element.name) continue;
      if (element.type === "checkbox" || element.type === "radio") {  // a box per value
        const group = document.querySelector(`fieldset[id="${element.name}"][data-default]`);
        const ticked = values.has(element.name) ? listed(element.name)
          : (group ? group.dataset.default.split(",") : []);
        element.checked = ticked.includes(element.value);
      } else if (element.type === "hidden") {
        continue;
      } else if (values.has(element.name)) {
        element.value = values.get(element.name);
      } else if (element.dataset.default !== undefined) {
        element.value = element.dataset.default;
      } else if (element.name !== "optimizer") {
        element.value = "";
      }
    }
    syncShown();
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

  function paint(html) {
    const holder = document.createElement("template");
    holder.innerHTML = html;
    const panels = holder.content.querySelectorAll("template[data-panel]");
    if (!panels.length && regions.length === 1) {  // a sister page: its one panel, bare
      regions[0].innerHTML = html;
      return;
    }
    panels.forEach((panel) => {
      const region = regions.find((r) => r.dataset.panel === panel.dataset.panel);
      if (!region) return;
      const fresh = panel.innerHTML;
      // a panel that says the same is left alone: no layout to redo, and the live summary is
      // announced on change only
      if (painted.get(region) === fresh) return;
      painted.set(region, fresh);
      region.innerHTML = fresh;
    });
  }

  function syncSummary() {
    // A sister page's results carry their summary; the page's status line says it.
    const text = document.querySelector("[data-panel] [data-summary-text]");
    const link = document.querySelector("#summary:not([data-panel]) a");
    if (text && link && link.textContent !== text.textContent) link.textContent = text.textContent;
  }

  function markStale(stale) {
    regions.forEach((region) => {
      if (stale) region.setAttribute("data-stale", "");
      else region.removeAttribute("data-stale");
    });
    if (!status) return;
    status.textContent = stale ? status.dataset.failed : "";
    status.hidden = !stale;
  }

  async function refresh(query) {
    const mine = ++sequence;
    if (inFlight) inFlight.abort();  // only the latest request may paint
    const controller = window.AbortController ? new AbortController() : null;
    inFlight = controller;
    regions.forEach((region) => region.setAttribute("aria-busy", "true"));
    const suffix = (query ? query + "&" : "") + "lang=" + encodeURIComponent(lang);
    try {
      const response = await fetch(liveUrl + "?" + suffix, {
        headers: { Accept: "text/html" }, signal: controller ? controller.signal : undefined });
      const text = await response.text();
      if (mine !== sequence) return;  // a newer query has been sent since
      if (!response.ok) throw new Error("HTTP " + response.status);
      paint(text);
      syncSummary();
      markStale(false);
      applyFieldValues();
      showFieldErrors();
      document.dispatchEvent(new CustomEvent("vramplan:painted", { detail: { query: query } }));
    } catch (error) {
      if (mine === sequence) markStale(true);  // a failure of the latest request: say so
    } finally {
      if (mine === sequence) {
        regions.forEach((region) => region.removeAttribute("aria-busy"));
        inFlight = null;
      }
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

  function changeNow() {
    clearTimeout(timer);
    editing = false;
    update(true);
  }

  // Inputs outside the form element (form="calculator") belong to it too.
  document.addEventListener("input", (event) => {
    const target = event.target;
    if (target.form !== form || target.tagName === "SELECT" || target.type === "checkbox") return;
    if (target === model) {
      const name = model.value.trim();
      if (name && !modelNames.has(name)) return;  // still typing a name: wait for the change
    }
    if (target === params && model && model.value) model.value = "";  // typed N wins
    // The first keystroke of an edit adds a history entry; the next ones update it.
    pendingPush = pendingPush || !editing;
    editing = true;
    clearTimeout(timer);
    timer = setTimeout(() => { update(pendingPush); pendingPush = false; }, DEBOUNCE_MS);
  });
  document.addEventListener("change", (event) => {
    const target = event.target;
    if (target.form !== form) return;
    editing = false;
    if (target === model || target.tagName === "SELECT" || target.type === "checkbox") {
      syncShown();
      changeNow();
    }
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    changeNow();
  });
  // A server-rendered "use this value" link (works without JavaScript as a plain link).
  document.addEventListener("click", (event) => {
    const link = event.target.closest && event.target.closest("a[data-fill]");
    const input = link && document.getElementById(link.dataset.fill);
    if (!input) return;
    event.preventDefault();
    input.value = link.dataset.value;
    changeNow();
  });
  window.addEventListener("popstate", (event) => {
    const query = event.state && typeof event.state.query === "string"
      ? event.state.query : location.search.slice(1);
    fill(query);
    updateLanguageLinks(query);
    refresh(query);
  });

  // "Copy the link": the page's address holds every input.
  const copy = document.querySelector("[data-copy-link]");
  const copyStatus = document.querySelector("[data-copy-status]");
  if (copy) {
    copy.hidden = false;
    copy.addEventListener("click", () => {
      const done = (ok) => {
        if (copyStatus) copyStatus.textContent = ok ? copy.dataset.copied : copy.dataset.copyFailed;
      };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(location.href).then(() => done(true), () => done(false));
      } else {
        done(false);
      }
    });
  }

  // On a phone the short summary stays in sight at the bottom while the verdict is not.
  const summary = document.getElementById("summary");
  if (summary && window.IntersectionObserver) {
    let watched = null;
    const observer = new IntersectionObserver((entries) => {
      entries.forEach((entry) => summary.classList.toggle("verdict-in-view", entry.isIntersecting));
    });
    const watch = () => {
      const verdict = document.getElementById("verdict") || document.querySelector(".panel-body .figures");
      if (verdict === watched) return;
      if (watched) observer.unobserve(watched);
      watched = verdict;
      if (verdict) observer.observe(verdict);
      else summary.classList.remove("verdict-in-view");
    };
    watch();
    document.addEventListener("vramplan:painted", watch);
  }

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
      const values = new URLSearchParams(currentQuery());
      configForm.querySelectorAll("[data-carry]").forEach((hidden) => {
        hidden.value = values.getAll(hidden.dataset.carry).join(",");
      });
      // fields left at their defaults are not in the query: add what is missing
      values.forEach((value, name) => {
        if (name === "model" || name === "params" || configForm.querySelector(`[data-carry="${name}"]`)) return;
        const extra = document.createElement("input");
        extra.type = "hidden";
        extra.name = name;
        extra.value = values.getAll(name).join(",");
        extra.dataset.carry = name;
        configForm.appendChild(extra);
      });
    });
  }

  syncShown();
  history.replaceState({ query: currentQuery() }, "", location.href);
})();
