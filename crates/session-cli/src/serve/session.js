"use strict";
// Added by `sessions serve` to a session's viewer page (export/html.rs: `window.SESSION_VIEWER`).
// Live updates: server-sent events from the offset the page was built from; each `rows` event
// goes to `SESSION_VIEWER.append(rows, leaf)` (queued until the viewer has loaded its payload),
// so new entries appear in the tree and, when they continue it, the main pane; the event is
// also announced as `sessions-serve:rows` on window. With --allow-write, every entry of the
// main pane gets "Branch from here" and "Branch with summary…" buttons: a POST with the CSRF
// header, after which the viewer's leaf moves to the entry (the new row itself arrives on the
// event stream). Text goes in with textContent; no inline handlers (the page's policy allows
// this script by its hash only).
(function () {
  const cfg = document.getElementById("sessions-serve");
  if (!cfg) return;
  const api = cfg.dataset.api, csrf = cfg.dataset.csrf, canWrite = cfg.dataset.write === "1";
  const viewer = () => window.SESSION_VIEWER;
  // The viewer has loaded its payload (its totals come with it).
  const ready = () => !!viewer() && viewer().totals() !== null;
  const el = (tag, text, cls) => {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  };
  const bar = el("aside", null, "serve-bar");
  bar.id = "serve-bar";
  const status = el("span", "live", "serve-status");
  const msg = el("span", "", "serve-msg");
  msg.id = "serve-msg";
  bar.append(status, el("span", canWrite ? "read-write" : "read-only", "serve-mode"));

  // ---- live updates ----
  let offset = Number(cfg.dataset.offset) || 0, added = 0, pending = [];
  // The leaf after `rows` as the file's reader sees it: a leaf control moves it to its target;
  // any other row with an id (not side-appended) becomes it. `null`: the viewer's default.
  const leafAfter = (rows) => {
    let leaf = null;
    for (const row of rows) {
      let v;
      try { v = JSON.parse(row); } catch (_) { continue; }
      if (!v || typeof v !== "object" || v.type === "session") continue;
      if (v.type === "leaf") { if (typeof v.targetId === "string") leaf = v.targetId; }
      else if (typeof v.id === "string" && v.appendMode !== "side") leaf = v.id;
    }
    return leaf;
  };
  const flush = () => {
    if (!pending.length || !ready()) return;
    const rows = pending;
    pending = [];
    const leaf = leafAfter(rows);
    viewer().append(rows, leaf === null ? undefined : leaf);
  };
  // A large payload loads asynchronously: rows that arrive before are kept until then.
  const wait = setInterval(() => { if (ready()) { clearInterval(wait); flush(); } }, 100);
  let src = null;
  const connect = () => {
    src = new EventSource(api + "/events?since=" + offset);
    src.addEventListener("open", () => { status.textContent = added ? "live · " + added + " new " + (added === 1 ? "row" : "rows") : "live"; });
    src.addEventListener("rows", (ev) => {
      const d = JSON.parse(ev.data);
      if (d.offset !== offset) return;
      offset = d.next;
      added += d.rows.length;
      pending.push(...d.rows);
      flush();
      status.textContent = "live · " + added + " new " + (added === 1 ? "row" : "rows");
      window.dispatchEvent(new CustomEvent("sessions-serve:rows", { detail: d }));
    });
    src.addEventListener("reset", (ev) => {
      status.textContent = "the file was rewritten (" + ev.data + "): reload the page";
      src.close();
    });
    // Reconnect from the offset reached (not the one the stream was opened with).
    src.onerror = () => {
      src.close();
      status.textContent = "live (reconnecting…)";
      setTimeout(connect, 1000);
    };
  };
  connect();

  // ---- the branch actions ----
  if (canWrite) {
    const form = el("div", null, "serve-summary");
    form.hidden = true;
    const what = el("span", "", "serve-selected");
    const text = el("textarea");
    text.id = "serve-summary";
    text.placeholder = "Summary of the branch left behind";
    const send = el("button", "Write the summary and branch");
    send.type = "button";
    send.id = "serve-summary-send";
    const cancel = el("button", "Cancel");
    cancel.type = "button";
    form.append(what, text, send, cancel);
    bar.append(form);
    let summaryOf = null;
    // The viewer moves the tree's marks; the entries it already drew in the main pane keep
    // theirs, so the "◀ leaf" marker of the main pane moves here.
    const markLeaf = (leaf) => {
      document.querySelectorAll("#path .entry > .head > .marker").forEach((m) => {
        if (m.textContent === "◀ leaf") m.remove();
      });
      document.querySelectorAll("#path .entry.leaf").forEach((e) => e.classList.remove("leaf"));
      const e = document.getElementById("entry-" + leaf);
      const head = e && e.classList.contains("entry") ? e.querySelector(":scope > .head") : null;
      if (!head) return;
      e.classList.add("leaf");
      head.insertBefore(el("span", "◀ leaf", "marker"), head.querySelector(":scope > .serve-actions"));
    };
    const post = async (action, entry, body) => {
      body.set("entry", entry);
      msg.textContent = "";
      const r = await fetch(api + "/" + action, {
        method: "POST",
        credentials: "same-origin",
        headers: { "X-CSRF-Token": csrf, "Content-Type": "application/x-www-form-urlencoded" },
        body: body.toString(),
      });
      if (!r.ok) { msg.textContent = await r.text(); return null; }
      const j = await r.json();
      cfg.dataset.leaf = j.leaf;
      // "Branch from here": the leaf is an entry the viewer shows; a summary's entry arrives
      // on the event stream and becomes the leaf there.
      if (action === "branch" && ready()) {
        viewer().append([], j.leaf);
        viewer().select(j.leaf);
        markLeaf(j.leaf);
      }
      msg.textContent = action === "branch" ? "the leaf is now " + entry : "branched with a summary under " + entry;
      return j;
    };
    send.addEventListener("click", async () => {
      if (summaryOf === null) return;
      const body = new URLSearchParams();
      body.set("summary", text.value);
      if (await post("branch-summary", summaryOf, body)) { form.hidden = true; text.value = ""; summaryOf = null; }
    });
    cancel.addEventListener("click", () => { form.hidden = true; summaryOf = null; });
    document.addEventListener("click", (e) => {
      const b = e.target instanceof Element ? e.target.closest("button[data-branch]") : null;
      if (!b) return;
      e.preventDefault();
      const entry = b.getAttribute("data-branch");
      if (b.getAttribute("data-branch-act") === "branch") post("branch", entry, new URLSearchParams());
      else { summaryOf = entry; what.textContent = "branch with a summary under " + entry; form.hidden = false; text.focus(); }
    });
    // Each entry of the main pane (the viewer builds them lazily) gets the two buttons.
    const button = (entry, act, label) => {
      const b = el("button", label, "serve-branch");
      b.type = "button";
      b.setAttribute("data-branch", entry);
      b.setAttribute("data-branch-act", act);
      return b;
    };
    const decorate = (root) => {
      root.querySelectorAll("[data-entry]").forEach((d) => {
        if (d.classList.contains("k-leaf") || d.classList.contains("k-session")) return;
        const head = d.querySelector(":scope > .head, :scope > .tool-head");
        if (!head || head.querySelector(":scope > .serve-actions")) return;
        const id = d.getAttribute("data-entry");
        const s = el("span", null, "serve-actions");
        s.append(button(id, "branch", "Branch from here"), button(id, "summary", "Branch with summary…"));
        head.append(s);
      });
    };
    const main = document.getElementById("path");
    if (main) {
      decorate(main);
      new MutationObserver(() => decorate(main)).observe(main, { childList: true, subtree: true });
    }
  }
  bar.append(msg);
  document.body.append(bar);
})();
