// rtcf live view: the page side. Plain JS; cytoscape.js + cytoscape-dagre draw the system,
// uPlot the live plots. The server pushes the system and plot frames over one WebSocket;
// operations go through the JSON API (/api/...), whose answer is shown in #message.
"use strict";

const PLOT_WINDOW_S = 10;          // seconds of history shown in a plot
const PALETTE = ["#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2",
                 "#db2777", "#65a30d", "#ea580c", "#4f46e5", "#0d9488", "#b91c1c"];

const view = {
  system: null, selected: null, structureSig: "", configSig: "", ws: null,
  plots: {},                        // key -> {u, data, labels, count, dropped, el}
  panels: {},                       // name -> {render} registered by a panel's script
  panelData: {}, panelTimer: null, panelScripts: new Set(), cy: null,
};
window.rtcf = view;                 // for the browser tests, the panels and the curious

// -- small helpers ---------------------------------------------------------------------
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(e.dataset, v);
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}
const fmt = (v, d = 0) => (typeof v === "number" && isFinite(v)) ? v.toFixed(d) : "–";
let messageTimer = null;
function say(text, ok) {
  const m = document.getElementById("message");
  m.textContent = text;
  m.className = ok ? "ok show" : "error show";
  clearTimeout(messageTimer);
  messageTimer = setTimeout(() => { m.className = m.className.replace(" show", ""); },
                            ok ? 4000 : 15000);
}
async function post(url, body) {
  try {
    const r = await fetch(url, {method: "POST", headers: {"Content-Type": "application/json"},
                                body: JSON.stringify(body)});
    const j = await r.json().catch(() => ({ok: false, error: `HTTP ${r.status}`}));
    say(j.ok ? j.message : j.error, j.ok);
    return j;
  } catch (e) {
    say(`request failed: ${e}`, false);
    return {ok: false};
  }
}
function comp(id) {
  return view.system ? view.system.components.find(c => c.id === id) : null;
}

// -- the WebSocket ---------------------------------------------------------------------
function connect() {
  const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`);
  view.ws = ws;
  const link = document.getElementById("link");
  ws.onopen = () => {
    link.textContent = "live"; link.className = "link up";
    for (const p of Object.values(view.plots)) ws.send(JSON.stringify(p.request));
  };
  ws.onclose = () => {
    link.textContent = "disconnected: retrying"; link.className = "link down";
    setTimeout(connect, 1000);
  };
  ws.onmessage = (ev) => {
    const msg = JSON.parse(ev.data);
    if (msg.type === "system") onSystem(msg);
    else if (msg.type === "plot") onPlot(msg);
    else if (msg.type === "plotting") onPlotting(msg);
    else if (msg.type === "error") say(msg.message, false);
  };
}

// -- the system --------------------------------------------------------------------------
function onSystem(sys) {
  view.system = sys;
  loadPanelScripts(sys.panels || []);
  document.getElementById("naming").textContent =
    `naming ${sys.nameservers.join(", ")} · ${sys.components.length} components · ` +
    `updated ${new Date(sys.time * 1000).toLocaleTimeString()}` +
    (sys.errors.length ? ` · ${sys.errors.join("; ")}` : "");
  const sig = JSON.stringify([sys.components.map(c => [c.id, c.ports.length, c.ecs]),
                              sys.connections.map(c => c.id),
                              sys.ecs.map(e => [e.id, e.members])]);
  if (sig !== view.structureSig) {
    view.structureSig = sig;
    drawGraph(sys);
  } else {
    updateGraphStates(sys);
  }
  drawTables(sys);
  if (view.selected && !comp(view.selected)) view.selected = null;
  drawDetails();
}

// node width from its longest label line (cytoscape's "label" width is deprecated)
function labelWidth(n) {
  const lines = String(n.data("label") || "").split("\n");
  return Math.max(...lines.map(l => l.length)) * 7.2 + 14;
}

const STATE_COLOURS = {ACTIVE: "#16a34a", INACTIVE: "#2563eb", ERROR: "#dc2626",
                       CREATED: "#6b7280", UNREACHABLE: "#111827"};

function graphElements(sys) {
  const els = [];
  for (const c of sys.components) {
    els.push({group: "nodes", data: {id: c.id, label: `${c.name}\n${c.type}`,
                                     state: c.state, kind: "component"}});
  }
  for (const e of sys.ecs) {
    const rate = e.rate ? ` ${fmt(e.rate)} Hz` : "";
    els.push({group: "nodes", data: {id: "ec:" + e.id, label: `${e.name}${rate}`,
                                     kind: "ec"}});
    e.members.forEach((m, i) => els.push({group: "edges", data: {
      id: `m:${e.id}:${m}`, source: "ec:" + e.id, target: m, kind: "member",
      label: String(i + 1)}}));
  }
  for (const c of sys.connections) {
    els.push({group: "edges", data: {id: "c:" + c.id, source: c.source, target: c.target,
                                     kind: c.kind,
                                     label: `${c.source_port} → ${c.target_port}`}});
  }
  return els;
}

function drawGraph(sys) {
  if (!view.cy) {
    view.cy = cytoscape({
      container: document.getElementById("graph"),
      style: [
        {selector: "node[kind='component']", style: {
          "shape": "round-rectangle", "label": "data(label)", "text-wrap": "wrap",
          "text-valign": "center", "color": "#fff", "font-size": 12, "font-weight": 600,
          "width": labelWidth, "height": 34, "padding": 8,
          "background-color": (n) => STATE_COLOURS[n.data("state")] || "#6b7280",
          "border-width": 0}},
        {selector: "node[kind='component']:selected", style: {
          "border-width": 4, "border-color": "#f59e0b"}},
        {selector: "node[kind='ec']", style: {
          "shape": "tag", "label": "data(label)", "font-size": 11, "color": "#374151",
          "text-valign": "center", "width": labelWidth, "height": 20, "padding": 6,
          "background-color": "#e5e7eb", "border-width": 1, "border-color": "#9ca3af"}},
        {selector: "edge", style: {
          "curve-style": "bezier", "control-point-step-size": 48,
          "width": 2, "line-color": "#475569",
          "target-arrow-shape": "triangle", "target-arrow-color": "#475569",
          "label": "data(label)", "font-size": 10, "color": "#1f2937",
          "text-background-color": "#fff", "text-background-opacity": 0.85,
          "text-background-padding": 2, "text-rotation": "autorotate"}},
        {selector: "edge[kind='member']", style: {
          "line-style": "dashed", "width": 1, "line-color": "#9ca3af",
          "target-arrow-color": "#9ca3af", "target-arrow-shape": "vee", "font-size": 9,
          "color": "#6b7280"}},
        {selector: "edge[kind='service']", style: {
          "line-style": "dotted", "target-arrow-shape": "none", "line-color": "#7c3aed"}},
      ],
    });
    view.cy.on("tap", "node[kind='component']", (ev) => select(ev.target.id()));
  }
  const cy = view.cy;
  cy.elements().remove();
  cy.add(graphElements(sys));
  cy.layout({name: "dagre", rankDir: "LR", nodeSep: 36, rankSep: 110, edgeSep: 20,
             animate: false, fit: true, padding: 30}).run();
  if (cy.zoom() > 1.4) { cy.zoom(1.4); cy.center(); }
  if (view.selected) cy.getElementById(view.selected).select();
}

function updateGraphStates(sys) {
  for (const c of sys.components) {
    const n = view.cy.getElementById(c.id);
    if (n.nonempty() && n.data("state") !== c.state) n.data("state", c.state);
  }
}

function stateBadge(state) {
  return el("span", {class: `state ${state}`}, state);
}

function drawTables(sys) {
  const names = Object.fromEntries(sys.components.map(c => [c.id, c.name]));
  const ecBody = document.querySelector("#ecs tbody");
  ecBody.replaceChildren(...sys.ecs.map(e => {
    const s = e.stats || {};
    const over = s.overruns || 0;
    return el("tr", {dataset: {ec: e.name}},
      el("td", {}, e.name), el("td", {}, e.kind), el("td", {class: "num"}, fmt(e.rate)),
      el("td", {class: "num rate"}, fmt(s.rate, 1)),
      el("td", {class: "num p99"}, fmt(s.lateness_p99_us)),
      el("td", {class: "num max"}, fmt(s.lateness_max_us)),
      el("td", {class: "num overruns" + (over ? " warn" : "")}, fmt(over)),
      el("td", {class: "num"}, fmt(s.cycles)),
      el("td", {}, e.members.map(m => names[m] || m).join(", ")));
  }));
  const ecNames = Object.fromEntries(sys.ecs.map(e => [e.id, e.name]));
  const body = document.querySelector("#components tbody");
  body.replaceChildren(...sys.components.map(c => el("tr",
    {dataset: {name: c.name, id: c.id}, class: c.id === view.selected ? "selected" : "",
     onclick: () => select(c.id)},
    el("td", {}, c.name), el("td", {}, c.type), el("td", {class: "state-cell"},
                                                     stateBadge(c.state)),
    el("td", {}, c.ports.map(p => p.name).join(", ")),
    el("td", {}, c.ecs.map(e => ecNames[e] || e).join(", ")))));
}

function select(id) {
  view.selected = id;
  view.configSig = "";
  if (view.cy) { view.cy.elements().unselect(); view.cy.getElementById(id).select(); }
  document.querySelectorAll("#components tbody tr").forEach(
    tr => tr.classList.toggle("selected", tr.dataset.id === id));
  clearInterval(view.panelTimer);
  view.panelData = {};
  const c = comp(id);
  if (c && c.panels && c.panels.length) {
    loadPanels(id);
    view.panelTimer = setInterval(() => loadPanels(id), 1000);
  }
  drawDetails(true);
}

// -- the details panel -----------------------------------------------------------------
function drawDetails(force) {
  const c = view.selected ? comp(view.selected) : null;
  const title = document.getElementById("details-title");
  const body = document.getElementById("details-body");
  if (!c) {
    title.textContent = "Component";
    body.className = "muted";
    body.textContent = "Select a component in the graph or the table.";
    return;
  }
  const sig = JSON.stringify([c.id, c.states, c.config, view.panelData,
                              Object.keys(view.panels)]);
  const editing = body.contains(document.activeElement) &&
                  document.activeElement.tagName === "INPUT";
  if (!force && (sig === view.configSig || editing)) return;
  view.configSig = sig;
  title.textContent = `${c.name}`;
  body.className = "";
  const ecNames = Object.fromEntries(view.system.ecs.map(e => [e.id, e.name]));
  const parts = [el("div", {class: "muted"}, `${c.type} · ${c.category || ""} · ${c.path}`)];
  parts.push(el("div", {class: "row"}, ...Object.entries(c.states).map(
    ([e, s]) => el("span", {class: "ecstate"}, `${ecNames[e] || e}: `, stateBadge(s)))));
  parts.push(el("div", {class: "row buttons"},
    ...["activate", "deactivate", "reset"].map(a => el("button",
      {class: `act ${a}`, onclick: () => post("/api/state", {component: c.id, action: a})},
      a))));
  parts.push(el("h3", {}, "Ports"));
  parts.push(el("table", {class: "ports"}, ...c.ports.map(p => el("tr", {},
    el("td", {}, p.name), el("td", {class: "muted"}, p.kind),
    el("td", {class: "muted"}, p.type || p.interfaces.map(i => i.type).join(", ")),
    el("td", {}, p.kind === "out" ? el("button", {class: "plot", dataset: {port: p.name},
        onclick: () => plot(c.id, p.name)}, "▶ plot") : "")))));
  if (c.config && c.config.sets.length) parts.push(...configSection(c));
  for (const name of c.panels || []) parts.push(...panelSection(name, c));
  body.replaceChildren(...parts);
}

function configSection(c) {
  const out = [el("h3", {}, "Configuration")];
  const sets = c.config.sets;
  const active = c.config.active;
  const sel = el("select", {id: "config-set"},
    ...sets.map(s => {
      const o = el("option", {value: s.id}, s.id + (s.id === active ? " (active)" : ""));
      if (s.id === (view.editSet || active)) o.selected = true;
      return o;
    }));
  sel.addEventListener("change", () => { view.editSet = sel.value; drawDetails(true); });
  out.push(el("div", {class: "row"}, "set ", sel, " ",
    el("button", {onclick: () => post("/api/configset", {component: c.id, set: sel.value})},
       "activate set")));
  const set = sets.find(s => s.id === (view.editSet || active)) || sets[0];
  out.push(el("table", {class: "params"}, ...Object.entries(set.values).map(([k, v]) => {
    const input = el("input", {value: v, name: k, dataset: {param: k}, spellcheck: "false"});
    const send = () => post("/api/param", {component: c.id, set: set.id, name: k,
                                           value: input.value})
      .then(j => { if (!j.ok) input.classList.add("refused");
                   else { input.classList.remove("refused"); input.blur(); } });
    input.addEventListener("keydown", (ev) => { if (ev.key === "Enter") send(); });
    return el("tr", {}, el("td", {}, k), el("td", {}, input),
              el("td", {}, el("button", {class: "set", onclick: send}, "set")));
  })));
  return out;
}

// -- panels of component packages (rtcf/web/panels.py) ----------------------------------
// A panel's script (/panels/<name>.js) registers its renderer with rtcf.panel(name, def):
// def.render(c, data, ui) returns the elements of its section; data is the answer of
// GET /api/<name>/<component id>, fetched every second while the component is selected.
view.ui = {el, fmt, post, say, reload: () => view.selected && loadPanels(view.selected)};
view.panel = (name, def) => { view.panels[name] = def; drawDetails(true); };

function loadPanelScripts(panels) {
  for (const p of panels) {
    if (view.panelScripts.has(p.name)) continue;
    view.panelScripts.add(p.name);
    document.body.append(el("script", {src: p.script}));
  }
}

async function loadPanels(id) {
  const c = comp(id);
  for (const name of (c && c.panels) || []) {
    let data;
    try {
      const r = await fetch(`/api/${name}/${id}`);
      const j = await r.json();
      data = j.ok ? j : {error: j.error};
    } catch (e) {
      data = {error: String(e)};
    }
    if (view.selected !== id) return;
    view.panelData[name] = data;
  }
  drawDetails();
}

function panelSection(name, c) {
  const info = ((view.system && view.system.panels) || []).find(p => p.name === name);
  const out = [el("h3", {}, info ? info.title : name)];
  const p = view.panels[name], d = view.panelData[name];
  if (!p || !d) { out.push(el("div", {class: "muted"}, "loading…")); return out; }
  if (d.error) { out.push(el("div", {class: "error-text"}, d.error)); return out; }
  try {
    out.push(...p.render(c, d, view.ui));
  } catch (e) {                                  // a broken panel: its own section only
    out.push(el("div", {class: "error-text"}, `panel ${name}: ${e}`));
  }
  return out;
}

// -- live plots --------------------------------------------------------------------------
function plot(cid, port) {
  const request = {op: "plot", component: cid, port: port};
  const key = `${cid}:${port}`;
  if (view.plots[key]) return;
  view.plots[key] = {request, pending: true};
  view.ws.send(JSON.stringify(request));
}

function onPlotting(msg) {
  const p = view.plots[msg.key] || (view.plots[msg.key] = {});
  if (p.u) return;
  const card = el("div", {class: "plot-card", dataset: {key: msg.key}});
  const head = el("div", {class: "plot-head"}, el("strong", {}, msg.title),
    el("span", {class: "muted"}, ` ${msg.data_type}`),
    el("span", {class: "plot-info muted"}, ""),
    el("button", {class: "close", title: "stop plotting",
                  onclick: () => unplot(msg.key)}, "×"));
  const area = el("div", {class: "plot-area"});
  card.append(head, area);
  document.getElementById("plots").append(card);
  Object.assign(p, {el: card, area, info: head.querySelector(".plot-info"), count: 0,
                    nonfinite: 0,
                    data: [[]], labels: [], title: msg.title, u: null, pending: false});
}

function makeChart(p, labels) {
  if (p.u) p.u.destroy();
  p.labels = labels;
  p.data = [[], ...labels.map(() => [])];
  const width = Math.max(320, p.area.clientWidth || 480);
  p.u = new uPlot({
    width, height: 220, legend: {show: labels.length <= 12},
    scales: {x: {time: false}},
    axes: [{stroke: "#6b7280", label: "t [s] (the samples' own time)", labelSize: 18,
            font: "11px system-ui", labelFont: "11px system-ui"},
           {stroke: "#6b7280", size: 60, font: "11px system-ui"}],
    series: [{label: "t [s]", value: (u, v) => v == null ? "–" : v.toFixed(3)}, ...labels.map((l, i) => ({label: l, stroke: PALETTE[i % PALETTE.length],
                                            width: 1.5, points: {show: false}}))],
  }, p.data, p.area);
}

function onPlot(msg) {
  for (const f of msg.frames) {
    const p = view.plots[f.key];
    if (!p || !p.area) continue;
    if (!p.u || f.labels.length !== p.labels.length) makeChart(p, f.labels);
    for (let i = 0; i < f.t.length; i++) {
      p.data[0].push(f.t[i]);
      for (let j = 0; j < p.labels.length; j++) {
        // NaN arrives as null, +-inf as +-1e999 (Infinity once parsed): a gap in the plot
        const v = f.y[i][j];
        const finite = typeof v === "number" && isFinite(v);
        if (!finite) p.nonfinite++;
        p.data[j + 1].push(finite ? v : null);
      }
    }
    const cut = p.data[0].length ? p.data[0][p.data[0].length - 1] - PLOT_WINDOW_S : 0;
    let n = 0;
    while (n < p.data[0].length && p.data[0][n] < cut) n++;
    if (n) for (const s of p.data) s.splice(0, n);
    p.count += f.t.length;
    p.lastT = f.t[f.t.length - 1];
    p.u.setData(p.data);
    p.info.textContent = ` · ${p.count} points · dropped ${f.dropped}` +
      (p.nonfinite ? ` · ${p.nonfinite} values not finite (gaps)` : "");
  }
}

function unplot(key) {
  const p = view.plots[key];
  if (!p) return;
  if (p.u) p.u.destroy();
  if (p.el) p.el.remove();
  delete view.plots[key];
  if (view.ws && view.ws.readyState === 1) view.ws.send(JSON.stringify({op: "unplot", key}));
}

window.addEventListener("resize", () => {
  for (const p of Object.values(view.plots)) {
    if (p.u) p.u.setSize({width: Math.max(320, p.area.clientWidth), height: 220});
  }
  if (view.cy) view.cy.resize();
});

connect();
