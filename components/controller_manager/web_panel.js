// The controller manager's panel of the rtcf web view (components/controller_manager/web.py
// serves its data): the manager's loop figures, then one row per controller with its
// state, updates, execution time, overruns and a start / stop button (switchController,
// STRICT: a refusal comes back with the manager's reason).
"use strict";

rtcf.panel("controllers", {
  render(c, d, ui) {
    const {el, fmt, post, reload} = ui;
    const m = d.manager;
    return [
      el("div", {class: "muted"},
         `ticks ${m.ticks} · p99 late ${fmt(m.lateness_p99_us)} µs · overruns ${m.ec_overruns}` +
         ` · overhead ${fmt(m.overhead_mean_us, 1)} µs · switches ${m.switches}`),
      el("div", {class: "scroll"}, el("table", {class: "controllers"},
        el("tr", {}, ...["name", "state", "updates", "µs mean / max", "over-runs", ""].map(
          h => el("th", {}, h))),
        ...d.controllers.map(k => el("tr", {dataset: {controller: k.name}},
          el("td", {title: k.type}, k.name, el("div", {class: "muted small"}, k.type)),
          el("td", {}, el("span", {class: `state ${k.state === "running" ? "ACTIVE" : "INACTIVE"}`},
                          k.state)),
          el("td", {class: "num"}, k.updates),
          el("td", {class: "num"}, `${fmt(k.mean_us, 1)} / ${fmt(k.max_us, 0)}`),
          el("td", {class: "num" + (k.overruns ? " warn" : "")}, k.overruns),
          el("td", {}, el("button", {onclick: () => post(`/api/controllers/${c.id}/switch`,
              k.state === "running" ? {start: [], stop: [k.name]} : {start: [k.name], stop: []})
              .then(reload)},
            k.state === "running" ? "stop" : "start"))))))];
  },
});
