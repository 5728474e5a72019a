"use strict";
// Added by `sessions serve` to a session's export page: live updates (server-sent events from
// the offset the page was built from: new rows are listed in a panel and announced as the
// `sessions-serve:rows` event on window, for the viewer) and, with --allow-write, "branch
// from here" / "branch with summary" on the entry last clicked. Text goes in with textContent.
(function () {
  const cfg = document.getElementById("sessions-serve");
  if (!cfg) return;
  const api = cfg.dataset.api, csrf = cfg.dataset.csrf, canWrite = cfg.dataset.write === "1";
  const el = (tag, text, cls) => {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  };
  const bar = el("aside", null, "serve-bar");
  bar.id = "serve-bar";
  const status = el("span", "live", "serve-status");
  const live = el("ol", null, "serve-live");
  live.id = "serve-live";
  const reload = el("button", "Reload to see them in the tree");
  reload.type = "button";
  reload.hidden = true;
  reload.addEventListener("click", () => location.reload());
  bar.append(status, reload);
  let selected = null;
  const sel = el("span", "", "serve-selected");
  const msg = el("span", "", "serve-msg");
  if (canWrite) {
    const b1 = el("button", "Branch from here");
    b1.type = "button";
    b1.id = "serve-branch";
    const b2 = el("button", "Branch with summary…");
    b2.type = "button";
    b2.id = "serve-branch-summary";
    const text = el("textarea");
    text.id = "serve-summary";
    text.placeholder = "Summary of the branch left behind";
    text.hidden = true;
    const post = async (what, body) => {
      if (!selected) { msg.textContent = "click an entry first"; return; }
      body.set("entry", selected);
      const r = await fetch(api + "/" + what, {
        method: "POST",
        credentials: "same-origin",
        headers: { "X-CSRF-Token": csrf, "Content-Type": "application/x-www-form-urlencoded" },
        body: body.toString(),
      });
      if (r.ok) { const j = await r.json(); location.hash = "e-" + j.leaf; location.reload(); }
      else msg.textContent = await r.text();
    };
    b1.addEventListener("click", () => post("branch", new URLSearchParams()));
    b2.addEventListener("click", () => {
      if (text.hidden) { text.hidden = false; text.focus(); return; }
      const body = new URLSearchParams();
      body.set("summary", text.value);
      post("branch-summary", body);
    });
    bar.append(sel, b1, b2, text);
    document.addEventListener("click", (e) => {
      const t = e.target instanceof Element ? e.target.closest("[data-id]") : null;
      if (!t || bar.contains(t)) return;
      selected = t.getAttribute("data-id");
      sel.textContent = "entry " + selected;
    });
  } else {
    bar.append(el("span", "read-only", "serve-mode"));
  }
  bar.append(msg, live);
  document.body.append(bar);
  let offset = Number(cfg.dataset.offset) || 0, added = 0;
  const summary = (row) => {
    try {
      const v = JSON.parse(row);
      const role = v.message && v.message.role ? v.message.role : v.type;
      let t = "";
      const c = v.message && v.message.content;
      if (typeof c === "string") t = c;
      else if (Array.isArray(c)) t = c.filter((b) => b && b.type === "text").map((b) => b.text).join(" ");
      else if (typeof v.summary === "string") t = v.summary;
      return [v.id || "", role || "row", t.slice(0, 200)];
    } catch (_) { return ["", "unparsed", row.slice(0, 200)]; }
  };
  const src = new EventSource(api + "/events?since=" + offset);
  src.addEventListener("rows", (ev) => {
    const d = JSON.parse(ev.data);
    offset = d.next;
    for (const row of d.rows) {
      const [id, role, t] = summary(row);
      const li = el("li");
      li.dataset.row = id;
      li.append(el("code", id), el("span", " " + role + " ", "role"), el("span", t));
      live.append(li);
      added++;
    }
    status.textContent = "live · " + added + " new " + (added === 1 ? "row" : "rows");
    reload.hidden = false;
    window.dispatchEvent(new CustomEvent("sessions-serve:rows", { detail: d }));
  });
  src.addEventListener("reset", (ev) => {
    status.textContent = "the file was rewritten: " + ev.data;
    reload.hidden = false;
    src.close();
  });
  src.onerror = () => { status.textContent = "live (reconnecting…)"; };
})();
