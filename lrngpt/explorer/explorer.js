"use strict";
// The embedding explorer's own script (lrngpt/explorer/page.py writes it inline).
// Data: #lrn-data (JSON) and base64 blocks decoded on first use. Search follows
// lrngpt.analysis.embeddings.neighbors: the query's BPE ids (tiktoken's merge rule over the
// token bytes), the mean of the pieces when there are several (float32, summed in order, as
// torch does), cosines in float64, the query's own ids left out.
(() => {
  const $ = (sel) => document.querySelector(sel);
  const DATA = JSON.parse($("#lrn-data").textContent);
  const state = { frame: 0, query: null, k: 10, category: -1, panels: [] };

  // ---- decoding ------------------------------------------------------------------------------
  function bytesOf(name) {
    const bin = atob(document.getElementById(name).textContent.trim());
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }
  let HALF = null; // float16 bits -> value, built on first use
  function halfTable() {
    if (HALF) return HALF;
    HALF = new Float32Array(65536);
    for (let h = 0; h < 65536; h++) {
      const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 31, f = h & 1023;
      HALF[h] = e === 0 ? s * f * 2 ** -24 : e === 31 ? (f ? NaN : s * Infinity) : s * (1 + f / 1024) * 2 ** (e - 15);
    }
    return HALF;
  }
  function vocab(i) {
    const v = DATA.vocabs[i];
    if (!v.pos) v.pos = new Map(v.ids.map((id, p) => [id, p]));
    return v;
  }
  function view(i) { // decodes a view's rows, norms and map on first use
    const v = DATA.views[i];
    if (v.rows) return v;
    const n = vocab(v.vocab).ids.length, d = v.d, raw = bytesOf(v.vectors);
    let rows;
    if (DATA.precision === "float32") rows = new Float32Array(raw.buffer);
    else if (DATA.precision === "float16") {
      const h = new Uint16Array(raw.buffer), t = halfTable();
      rows = new Float32Array(h.length);
      for (let j = 0; j < h.length; j++) rows[j] = t[h[j]];
    } else {
      const q = new Int8Array(raw.buffer), sc = new Float32Array(bytesOf(v.scales).buffer);
      rows = new Float32Array(q.length);
      for (let j = 0; j < q.length; j++) rows[j] = q[j] * sc[(j / d) | 0];
    }
    const norms = new Float64Array(n);
    for (let r = 0; r < n; r++) {
      let s = 0;
      for (let j = r * d; j < (r + 1) * d; j++) s += rows[j] * rows[j];
      norms[r] = Math.sqrt(s);
    }
    v.rows = rows; v.norms = norms; v.xy = new Int16Array(bytesOf(v.coords).buffer);
    return v;
  }

  // ---- byte-level BPE, as tiktoken encodes with ranks = ids ----------------------------------
  const SPLIT = /'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
  const latin1 = (b) => String.fromCharCode.apply(null, b);
  function ranks(v) {
    if (v.ranks) return v.ranks;
    const all = bytesOf(v.bytes), special = new Set(v.special);
    v.ranks = new Map();
    let at = 0;
    v.lengths.forEach((len, id) => {
      if (!special.has(id)) v.ranks.set(latin1(all.subarray(at, at + len)), id);
      at += len;
    });
    return v.ranks;
  }
  function bytePairMerge(b, r) { // parts[i] = [start, rank of merging part i with part i+1]
    const rank = (a, z) => { const x = r.get(latin1(b.subarray(a, z))); return x === undefined ? Infinity : x; };
    const parts = [];
    for (let i = 0; i <= b.length; i++) parts.push([i, Infinity]);
    const pairRank = (i) => (i + 2 < parts.length ? rank(parts[i][0], parts[i + 2][0]) : Infinity);
    for (let i = 0; i < parts.length; i++) parts[i][1] = pairRank(i);
    for (;;) {
      let at = -1, min = Infinity;
      for (let i = 0; i < parts.length - 1; i++) if (parts[i][1] < min) { min = parts[i][1]; at = i; }
      if (at < 0) break;
      parts.splice(at + 1, 1);
      parts[at][1] = pairRank(at);
      if (at > 0) parts[at - 1][1] = pairRank(at - 1);
    }
    const ids = [];
    for (let i = 0; i < parts.length - 1; i++) ids.push(rank(parts[i][0], parts[i + 1][0]));
    return ids;
  }
  function encode(vi, text) {
    const v = DATA.vocabs[vi], r = ranks(v), enc = new TextEncoder(), ids = [];
    for (const m of text.matchAll(SPLIT)) {
      const b = enc.encode(m[0]), whole = r.get(latin1(b));
      if (whole !== undefined) ids.push(whole);
      else ids.push(...bytePairMerge(b, r));
    }
    return ids;
  }

  // ---- neighbours ----------------------------------------------------------------------------
  function search(vi, ids, k) {
    const v = view(vi), voc = vocab(v.vocab), d = v.d, n = voc.ids.length;
    const pos = ids.map((id) => voc.pos.get(id));
    if (pos.some((p) => p === undefined)) return { missing: ids.filter((id, i) => pos[i] === undefined) };
    const q = new Float64Array(d);
    if (pos.length === 1) for (let j = 0; j < d; j++) q[j] = v.rows[pos[0] * d + j];
    else { // the mean of the pieces in float32, summed in order then divided, as torch's mean
      const acc = new Float32Array(d);
      for (const p of pos) for (let j = 0; j < d; j++) acc[j] = Math.fround(acc[j] + v.rows[p * d + j]);
      for (let j = 0; j < d; j++) q[j] = Math.fround(acc[j] / pos.length);
    }
    let qn = 0;
    for (let j = 0; j < d; j++) qn += q[j] * q[j];
    qn = Math.max(Math.sqrt(qn), 1e-12);
    const skip = new Set(pos), best = []; // best: [cos, p], cosine descending, at most k
    for (let p = 0; p < n; p++) {
      if (skip.has(p)) continue;
      let dot = 0;
      for (let j = 0, o = p * d; j < d; j++) dot += q[j] * v.rows[o + j];
      const c = dot / (qn * Math.max(v.norms[p], 1e-12));
      if (best.length === k && c <= best[k - 1][0]) continue;
      let i = best.length;
      while (i > 0 && best[i - 1][0] < c) i--;
      best.splice(i, 0, [c, p]);
      if (best.length > k) best.pop();
    }
    return { neighbors: best.map(([c, p]) => ({ id: voc.ids[p], pos: p, cosine: c })) };
  }

  // ---- formatting ----------------------------------------------------------------------------
  const quote = (t) => `'${t.replace(/'/g, "\\'")}'`;
  const fmt = (x, digits) => (x === null || x === undefined ? "–" : x.toFixed(digits));
  const int = (x) => x.toLocaleString("en-US");
  function colour(v, c) {
    if (c < 0) return "rgba(120,120,120,0.45)";
    const n = v.categories.length;
    return `hsl(${Math.round((c * 360) / n + (c % 2) * 13)},${c % 3 === 0 ? 70 : 58}%,${c % 2 ? 38 : 48}%)`;
  }
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) e.setAttribute(key, value);
    for (const c of children) e.append(c);
    return e;
  }
  function tokenInfo(voc, id) {
    const parts = [`${quote(voc.texts[id])}`, `id ${id}`];
    if (voc.freq) parts.push(`${int(voc.freq[id])}× in training`);
    if (voc.cat && voc.cat[id] >= 0) parts.push(voc.categories[voc.cat[id]]);
    return parts.join(" · ");
  }

  // ---- panels: a map, numbers and neighbour list per table ------------------------------------
  function makePanel(vi) {
    const v = DATA.views[vi];
    const canvas = el("canvas", { "aria-label": `2-D map of ${v.label}`, role: "img" });
    const list = el("ol", { class: "nbrs", "aria-label": `nearest tokens in ${v.label}` });
    const stats = el("p", { class: "stats" });
    const box = el("section", { class: "panel" }, el("h2", {}, `${v.label}`), stats,
      el("div", { class: "body" }, el("div", { class: "map" }, canvas), list));
    box.dataset.view = vi;
    const panel = { vi, box, canvas, list, stats, px: null, py: null, hits: [] };
    stats.append(...statLine(v));
    stats.dataset.usedAxes = v.used_axes;
    stats.dataset.valBpb = v.val_bpb === null ? "" : v.val_bpb;
    canvas.addEventListener("mousemove", (e) => hover(panel, e));
    canvas.addEventListener("mouseleave", () => ($("#tip").hidden = true));
    canvas.addEventListener("click", (e) => { const p = nearest(panel, e); if (p >= 0) searchId(vocab(v.vocab).ids[p]); });
    return panel;
  }
  function statLine(v) {
    const parts = [`d=${v.d}`, `step ${int(v.step)}`,
      el("span", { title: `val bpb: ${v.bpb_note}` }, `val bpb ${fmt(v.val_bpb, 4)}`),
      `used axes (90%) ${v.used_axes}/${v.d}`];
    if (v.purity !== null) parts.push(`category purity ${fmt(v.purity, 3)} (chance ${fmt(v.chance, 3)})`);
    if (v.variance) parts.push(`map axes hold ${Math.round(100 * (v.variance[0] + v.variance[1]))}% of the variance`);
    return parts.flatMap((p, i) => (i ? [" · ", p] : [p]));
  }
  function extent(values) { // the central 99% with a margin: a few far tokens must not squeeze the rest
    const s = Float64Array.from(values).sort(), n = s.length;
    const lo = s[Math.floor(0.005 * (n - 1))], hi = s[Math.ceil(0.995 * (n - 1))], pad = 0.04 * Math.max(hi - lo, 1);
    return [lo - pad, hi + pad];
  }
  function layout(panel) { // screen positions; tokens beyond the extent sit on its edge
    const v = view(panel.vi), n = v.xy.length / 2;
    const w = panel.canvas.clientWidth, h = panel.canvas.clientHeight, m = 10;
    const xs = new Float64Array(n), ys = new Float64Array(n);
    for (let p = 0; p < n; p++) { xs[p] = v.xy[2 * p]; ys[p] = v.xy[2 * p + 1]; }
    const [x0, x1] = extent(xs), [y0, y1] = extent(ys);
    const s = Math.min((w - 2 * m) / (x1 - x0), (h - 2 * m) / (y1 - y0));
    const ox = (w - s * (x1 - x0)) / 2, oy = (h - s * (y1 - y0)) / 2;
    const clamp = (x, lo, hi) => Math.min(hi, Math.max(lo, x));
    panel.px = new Float32Array(n); panel.py = new Float32Array(n);
    for (let p = 0; p < n; p++) {
      panel.px[p] = ox + s * (clamp(xs[p], x0, x1) - x0);
      panel.py[p] = h - (oy + s * (clamp(ys[p], y0, y1) - y0)); // y up
    }
  }
  function draw(panel) {
    const v = view(panel.vi), voc = vocab(v.vocab), dpr = window.devicePixelRatio || 1;
    const c = panel.canvas, w = c.clientWidth, h = c.clientHeight;
    if (!w || !h) return;
    c.width = Math.round(w * dpr); c.height = Math.round(h * dpr);
    layout(panel);
    const ctx = c.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    const lit = new Set(panel.hits), dim = lit.size > 0 || state.category >= 0;
    const catOf = (p) => (voc.cat ? voc.cat[voc.ids[p]] : -1);
    for (const pass of [0, 1]) { // uncategorised tokens first, under the coloured ones
      for (let p = 0; p < panel.px.length; p++) {
        const cat = catOf(p);
        if ((cat >= 0) !== (pass === 1) || lit.has(p)) continue;
        ctx.globalAlpha = dim && !(state.category >= 0 && cat === state.category) ? 0.3 : 1;
        ctx.fillStyle = colour(voc, cat);
        const r = cat >= 0 ? 2 : 1.5;
        ctx.fillRect(panel.px[p] - r, panel.py[p] - r, 2 * r, 2 * r);
      }
    }
    ctx.globalAlpha = 1;
    ctx.font = "12px system-ui, sans-serif";
    ctx.lineWidth = 3;
    panel.hits.forEach((p, i) => { // the query (first, ringed) and its neighbours, labelled
      ctx.beginPath();
      ctx.arc(panel.px[p], panel.py[p], i < panel.nQuery ? 6 : 4, 0, 2 * Math.PI);
      ctx.fillStyle = i < panel.nQuery ? "#111" : colour(voc, catOf(p));
      ctx.fill();
      ctx.strokeStyle = "#fff"; ctx.stroke();
      const label = quote(voc.texts[voc.ids[p]]);
      ctx.strokeText(label, panel.px[p] + 7, panel.py[p] - 5);
      ctx.fillStyle = "#111"; ctx.fillText(label, panel.px[p] + 7, panel.py[p] - 5);
    });
  }
  function nearest(panel, e) {
    if (!panel.px) return -1;
    const r = panel.canvas.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
    let best = -1, bd = 100; // within 10 px
    for (let p = 0; p < panel.px.length; p++) {
      const dd = (panel.px[p] - x) ** 2 + (panel.py[p] - y) ** 2;
      if (dd < bd) { bd = dd; best = p; }
    }
    return best;
  }
  function hover(panel, e) {
    const p = nearest(panel, e), tip = $("#tip");
    if (p < 0) { tip.hidden = true; return; }
    const voc = vocab(DATA.views[panel.vi].vocab);
    tip.textContent = tokenInfo(voc, voc.ids[p]);
    tip.hidden = false;
    tip.style.left = `${Math.min(e.pageX + 12, document.documentElement.scrollWidth - tip.offsetWidth - 4)}px`;
    tip.style.top = `${e.pageY + 14}px`;
  }

  // ---- the query -----------------------------------------------------------------------------
  function runQuery() {
    const info = $("#pieces");
    for (const panel of state.panels) {
      panel.hits = []; panel.nQuery = 0;
      panel.list.replaceChildren();
      panel.box.dataset.query = "";
    }
    const q = state.query;
    if (!q) { info.textContent = ""; state.panels.forEach(draw); return; }
    for (const panel of state.panels) {
      const v = DATA.views[panel.vi], voc = vocab(v.vocab);
      const ids = q.ids || encode(v.vocab, q.text);
      const pieces = ids.map((id) => quote(voc.texts[id])).join(" + ");
      info.textContent = ids.length === 0 ? "no tokens" : ids.length === 1 ? `${pieces}: id ${ids[0]}`
        : `${pieces}: ${ids.length} tokens, neighbours of their mean`;
      if (!ids.length) continue;
      const r = search(panel.vi, ids, state.k);
      panel.box.dataset.query = ids.join(",");
      if (r.missing) {
        panel.list.append(el("li", { class: "missing" }, `${r.missing.map((id) => quote(voc.texts[id])).join(", ")} `
          + `is not among the ${int(voc.ids.length)} tokens of this page (see --top)`));
        continue;
      }
      panel.hits = [...ids.map((id) => voc.pos.get(id)), ...r.neighbors.map((x) => x.pos)];
      panel.nQuery = ids.length;
      for (const x of r.neighbors) {
        const b = el("button", { type: "button", title: tokenInfo(voc, x.id) },
          el("code", {}, quote(voc.texts[x.id])), " ", el("span", { class: "cos" }, x.cosine.toFixed(4)));
        b.addEventListener("click", () => searchId(x.id));
        const li = el("li", {}, b);
        li.dataset.id = x.id; li.dataset.cos = x.cosine;
        panel.list.append(li);
      }
    }
    state.panels.forEach(draw);
  }
  function searchId(id) {
    const voc = vocab(DATA.views[state.panels[0].vi].vocab);
    $("#q").value = voc.texts[id];
    state.query = { ids: [id] };
    runQuery();
  }

  // ---- frames, table, legend -----------------------------------------------------------------
  function setFrame(f) {
    state.frame = Math.max(0, Math.min(DATA.frames.length - 1, f));
    const frame = DATA.frames[state.frame];
    $("#frame").value = state.frame;
    $("#frame-label").textContent = `${frame.label} (${state.frame + 1} of ${DATA.frames.length})`;
    state.panels = frame.views.map(makePanel);
    $("#panels").replaceChildren(...state.panels.map((p) => p.box));
    $("#panels").dataset.frame = state.frame;
    for (const row of document.querySelectorAll("#views tbody tr")) {
      const on = Number(row.dataset.frame) === state.frame;
      row.classList.toggle("current", on);
      if (on) row.setAttribute("aria-current", "true"); else row.removeAttribute("aria-current");
    }
    runQuery();
  }
  function buildTable() {
    const head = ["table", "d", "step", "val bpb", "used axes (90%)", "category purity", "chance"];
    const rows = [];
    DATA.frames.forEach((frame, f) => frame.views.forEach((vi) => {
      const v = DATA.views[vi];
      // several runs on one page: name the run too ("demo: trained"); a sweep's labels already say d=
      const label = DATA.frames.length > 1 && !v.label.startsWith(frame.label) ? `${frame.label}: ${v.label}` : v.label;
      const go = el("button", { type: "button" }, label);
      go.addEventListener("click", () => setFrame(f));
      const tr = el("tr", {}, el("td", {}, go), ...[v.d, int(v.step), fmt(v.val_bpb, 4), `${v.used_axes}/${v.d}`,
        fmt(v.purity, 3), fmt(v.chance, 3)].map((x) => el("td", { class: "num" }, String(x))));
      tr.dataset.frame = f;
      rows.push(tr);
    }));
    $("#views").replaceChildren(el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {}, h)))), el("tbody", {}, ...rows));
  }
  function buildLegend() {
    const voc = DATA.vocabs[0];
    if (!voc.cat) { $("#legend").textContent = "This corpus has no word categories; every token is grey."; return; }
    const counts = new Array(voc.categories.length).fill(0);
    for (const id of voc.ids) if (voc.cat[id] >= 0) counts[voc.cat[id]]++;
    const chips = voc.categories.map((name, c) => {
      const b = el("button", { type: "button", class: "chip", "aria-pressed": "false" },
        el("span", { class: "swatch" }), `${name} ${counts[c]}`);
      b.firstChild.style.background = colour(voc, c);
      b.addEventListener("click", () => {
        state.category = state.category === c ? -1 : c;
        document.querySelectorAll("#legend .chip").forEach((x, i) => x.setAttribute("aria-pressed", String(i === state.category)));
        state.panels.forEach(draw);
      });
      return b;
    });
    const none = voc.ids.length - counts.reduce((a, b) => a + b, 0);
    $("#legend").replaceChildren(...chips, el("span", { class: "chip" }, el("span", { class: "swatch grey" }), `no category ${none}`));
  }

  function init() {
    const voc = DATA.vocabs[0];
    $("#about").textContent = `${int(voc.ids.length)} tokens on the map (the most frequent in training first); `
      + `map by ${{ pca: "PCA", tsne: "t-SNE", umap: "UMAP" }[DATA.method]}; neighbours by cosine over the page's ${DATA.precision} vectors. ${voc.note}.`;
    $("#notes").textContent = "Keys: / search, Escape clear, [ and ] previous and next table, arrows on the slider. "
      + "Hover a point for its token; click a point or a neighbour to search from it. "
      + "A word the tokenizer splits is looked up by the mean of its pieces, as lrn embed neighbors does.";
    if (DATA.frames.length > 1) {
      $("#stepper").hidden = false;
      $("#frame").max = DATA.frames.length - 1;
    }
    buildTable();
    buildLegend();
    $("#frame").addEventListener("input", (e) => setFrame(Number(e.target.value)));
    $("#prev").addEventListener("click", () => setFrame(state.frame - 1));
    $("#next").addEventListener("click", () => setFrame(state.frame + 1));
    $("#q").addEventListener("input", (e) => { state.query = e.target.value ? { text: e.target.value } : null; runQuery(); });
    $("#k").addEventListener("input", (e) => {
      const k = Math.round(Number(e.target.value));
      if (k >= 1 && k <= 100) { state.k = k; runQuery(); }
    });
    document.addEventListener("keydown", (e) => {
      const typing = e.target instanceof HTMLInputElement && e.target.type !== "range";
      if (e.key === "/" && !typing) { e.preventDefault(); $("#q").focus(); }
      else if (e.key === "Escape" && e.target === $("#q")) { $("#q").value = ""; state.query = null; runQuery(); }
      else if ((e.key === "[" || e.key === "]") && !typing) setFrame(state.frame + (e.key === "]" ? 1 : -1));
    });
    new ResizeObserver(() => state.panels.forEach(draw)).observe($("#panels"));
    setFrame(0);
    document.documentElement.dataset.ready = "1";
    // the other tables are decoded while the reader looks at the first, so stepping never waits
    const rest = DATA.views.map((_, i) => i);
    const next = () => { if (rest.length) { view(rest.shift()); setTimeout(next, 0); } };
    setTimeout(next, 0);
  }

  window.lrnExplorer = { DATA, state, encode, search, setFrame, view };
  init();
})();
