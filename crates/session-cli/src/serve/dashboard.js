"use strict";
// The dashboard of `sessions serve`: the listing (/api/sessions) as one sortable table per
// agent, and the store-wide search (/api/search). Text goes in with textContent only.
(function () {
  const el = (tag, text, cls) => {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  };
  const seg = (s) => encodeURIComponent(s);
  const link = (agent, session, text, hash) => {
    const a = el("a", text);
    a.href = "/s/" + seg(agent) + "/" + seg(session) + (hash || "");
    return a;
  };
  const bytes = (n) => {
    if (n === null || n === undefined) return "";
    const u = ["B", "KB", "MB", "GB"];
    let i = 0;
    while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : String(n)) + " " + u[i];
  };
  const age = (ms) => {
    if (ms === null || ms === undefined) return "";
    const s = Math.max(0, (Date.now() - ms) / 1000);
    if (s < 60) return Math.round(s) + "s";
    if (s < 3600) return Math.round(s / 60) + "m";
    if (s < 86400) return Math.round(s / 3600) + "h";
    return Math.round(s / 86400) + "d";
  };
  const COLS = [
    ["Session", (r) => r.key || r.sessionId || ""],
    ["Kind", (r) => r.kind || ""],
    ["Model", (r) => r.model || ""],
    ["Tokens", (r) => r.tokens],
    ["Age", (r) => (r.updatedAt === null ? null : -r.updatedAt)],
    ["Size", (r) => r.size],
    ["Messages", (r) => r.messages],
  ];
  function table(agent, rows) {
    const t = el("table", null, "sessions");
    const head = t.createTHead().insertRow();
    const body = t.createTBody();
    let sortBy = 4, dir = 1;
    const draw = () => {
      const key = COLS[sortBy][1];
      const sorted = rows.slice().sort((a, b) => {
        const x = key(a), y = key(b);
        if (x === y) return 0;
        if (x === null || x === undefined) return 1;
        if (y === null || y === undefined) return -1;
        return (x < y ? -1 : 1) * dir;
      });
      body.replaceChildren();
      for (const r of sorted) {
        const tr = body.insertRow();
        const name = r.key || r.sessionId || r.session || "";
        const c0 = tr.insertCell();
        if (r.session) c0.append(link(agent, r.session, name)); else c0.textContent = name;
        tr.insertCell().textContent = r.kind || "";
        tr.insertCell().textContent = r.model || "";
        tr.insertCell().textContent = r.tokens === null ? "" : r.tokens.toLocaleString();
        tr.insertCell().textContent = age(r.updatedAt);
        tr.insertCell().textContent = bytes(r.size);
        tr.insertCell().textContent = r.messages === null ? "" : String(r.messages);
      }
    };
    COLS.forEach(([label], i) => {
      const th = el("th", label);
      th.tabIndex = 0;
      th.setAttribute("role", "button");
      const sort = () => { if (sortBy === i) dir = -dir; else { sortBy = i; dir = 1; } draw(); };
      th.addEventListener("click", sort);
      th.addEventListener("keydown", (e) => { if (e.key === "Enter") sort(); });
      head.append(th);
    });
    draw();
    return t;
  }
  async function load() {
    const box = document.getElementById("agents");
    const r = await fetch("/api/sessions", { credentials: "same-origin" });
    if (!r.ok) { box.replaceChildren(el("p", "cannot list: " + (await r.text()), "error")); return; }
    const doc = await r.json();
    box.replaceChildren();
    for (const a of doc.agents) {
      const sec = el("section", null, "agent");
      const h = el("h2", a.agent === "-" ? a.dir : "agent " + a.agent);
      sec.append(h, el("p", a.sessions.length + " sessions · " + a.dir, "dir"));
      if (a.sessions.length) sec.append(table(a.agent, a.sessions));
      box.append(sec);
    }
  }
  document.getElementById("search").addEventListener("submit", async (e) => {
    e.preventDefault();
    const q = document.getElementById("q").value;
    const box = document.getElementById("hits");
    if (!q) { box.hidden = true; return; }
    const regex = document.getElementById("regex").checked ? "&regex=1" : "";
    const r = await fetch("/api/search?q=" + encodeURIComponent(q) + regex, { credentials: "same-origin" });
    box.hidden = false;
    if (!r.ok) { box.replaceChildren(el("p", await r.text(), "error")); return; }
    const doc = await r.json();
    box.replaceChildren(el("h2", doc.hits.length + (doc.truncated ? "+" : "") + " hits"));
    const ul = el("ul", null, "hits");
    for (const h of doc.hits) {
      const li = el("li");
      const where = (h.agent === "-" ? "" : h.agent + " · ") + h.sessionId + " · line " + h.line;
      if (h.session) li.append(link(h.agent, h.session, where, h.entryId ? "#e-" + h.entryId : ""));
      else li.append(el("span", where));
      li.append(el("span", " " + (h.role || h.type) + (h.onCurrentBranch === false ? " (off-branch)" : "") + ": ", "meta"));
      li.append(el("span", h.before), el("mark", h.match), el("span", h.after));
      ul.append(li);
    }
    box.append(ul);
  });
  load().catch((e) => document.getElementById("agents").replaceChildren(el("p", String(e), "error")));
})();
