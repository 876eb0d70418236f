// Myriad's HTML report: draws the data Myriad wrote into the page (the script
// element #myriad-data) with Vega-Lite, compiled to Vega and rendered as SVG.
// Offline: Vega and Vega-Lite are inlined in the page. The data's kind picks
// the report: configurations (sweep, plan), campaign, step. window.myriadReport
// exposes what the browser test checks (rows drawn, the views).
(function () {
  "use strict";

  const data = JSON.parse(document.getElementById("myriad-data").textContent);
  const app = document.getElementById("app");
  const state = { views: {}, rows: 0, selected: 0, shown: null };
  window.myriadReport = state;

  // ---- small helpers ---------------------------------------------------------
  function el(tag, attrs, children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const c of children || []) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    return e;
  }

  function fmt(value, key) {
    if (value === null || value === undefined || Number.isNaN(value)) return "-";
    if (typeof value !== "number") return String(value);
    if (key && /mfu|memory|ettr|fraction/.test(key)) return (100 * value).toFixed(1) + " %";
    const a = Math.abs(value);
    if (Number.isInteger(value) && a < 1e5) return value.toLocaleString("en-US");
    for (const [scale, unit] of [
      [1e12, " T"],
      [1e9, " G"],
      [1e6, " M"],
      [1e4, " k"],
    ]) {
      if (a >= scale) return (value / scale).toPrecision(4) + unit;
    }
    if (a !== 0 && a < 1e-3) return value.toExponential(3);
    return value.toPrecision(4);
  }

  // A data key as a Vega-Lite field: dots in scenario keys are not nesting.
  function field(key) {
    return key.replace(/\./g, "\\.");
  }

  const tooltip = el("div", { id: "tooltip" });
  document.body.appendChild(tooltip);
  function tooltipHandler(labels) {
    return function (handler, event, item, value) {
      if (!value || !item || !item.datum) {
        tooltip.style.display = "none";
        return;
      }
      // Text nodes, never markup: values and labels hold names from the input.
      const rows = Object.entries(labels)
        .filter(([k]) => item.datum[k] !== undefined)
        .map(([k, label]) => el("tr", {}, [el("td", { text: label }), el("td", { text: fmt(item.datum[k], k) })]));
      tooltip.replaceChildren(el("table", {}, rows));
      tooltip.style.display = "block";
      tooltip.style.left = event.clientX + 14 + "px";
      tooltip.style.top = event.clientY + 14 + "px";
    };
  }

  // Compiles a Vega-Lite spec and renders it as SVG into `container`.
  async function render(name, container, spec, labels) {
    if (state.views[name]) state.views[name].finalize();
    container.innerHTML = "";
    const compiled = vegaLite.compile(spec).spec;
    const view = new vega.View(vega.parse(compiled), {
      renderer: "svg",
      container: container,
      hover: true,
    });
    if (labels) view.tooltip(tooltipHandler(labels));
    await view.runAsync();
    state.views[name] = view;
    return view;
  }

  function header(subtitle) {
    app.appendChild(
      el("header", {}, [el("h1", { text: data.title || "Myriad" }), el("p", { text: subtitle || data.subtitle || "" })]),
    );
  }

  function notes(parent) {
    if (!data.notes || data.notes.length === 0) return;
    parent.appendChild(el("ul", { class: "notes muted" }, data.notes.map((n) => el("li", { text: n }))));
  }

  // ---- configurations: sweep and plan ------------------------------------------
  async function configurations() {
    header();
    const main = el("main");
    app.appendChild(main);
    const params = data.parameters || [];
    const metrics = data.metrics || [];
    const labels = {};
    for (const p of params) labels[p.key] = p.label;
    for (const m of metrics) labels[m.key] = m.label;
    const numeric = new Set(metrics.map((m) => m.key));
    const rows = data.rows.filter((r) => r.m);
    const values = rows.map((r) => Object.assign({ id: r.id, rank: r.rank || null, front: !!r.front, fits: !!r.fits }, r.p, r.m));
    for (const p of params) {
      if (values.every((v) => typeof v[p.key] === "number")) numeric.add(p.key);
    }
    state.rows = values.length;
    state.selected = values.length;
    const objective = data.objective.key;
    const frontKeys = (data.front && data.front.keys) || [];
    const varying = params.filter((p) => new Set(values.map((v) => v[p.key])).size > 1);
    const byId = new Map(data.rows.map((r) => [r.id, r]));

    // The scatterplot and its controls.
    const plot = el("section");
    main.appendChild(plot);
    plot.appendChild(el("h2", { text: `${values.length} configurations` }));
    const choices = [...metrics, ...params];
    const select = (id, label, chosen, options) => {
      const s = el(
        "select",
        { id },
        options.map((o) => {
          const opt = el("option", { value: o.key, text: o.label });
          if (o.key === chosen) opt.selected = true;
          return opt;
        }),
      );
      return [el("label", {}, [label, s]), s];
    };
    const [xLabel, xSelect] = select("x-axis", "x", frontKeys[1] || data.defaults.x, choices.filter((c) => numeric.has(c.key)));
    const [yLabel, ySelect] = select("y-axis", "y", frontKeys[0] || data.defaults.y, choices.filter((c) => numeric.has(c.key)));
    const [cLabel, cSelect] = select("colour", "colour", data.defaults.color, [{ key: "front", label: "Pareto front" }, ...choices]);
    const count = el("span", { id: "selected", class: "muted" });
    plot.appendChild(el("div", { class: "controls" }, [xLabel, yLabel, cLabel, count]));
    const scatter = el("div", { id: "scatter" });
    plot.appendChild(scatter);
    plot.appendChild(
      el("p", {
        class: "muted",
        text:
          "Drag on the plot to select configurations (the table lists them); click a point for its breakdown, memory and scenario. " +
          (data.front ? data.front.note : ""),
      }),
    );
    notes(plot);

    const details = el("section", { id: "details" }, [
      el("h2", { text: "Configuration" }),
      el("p", { class: "muted", text: "Click a point or a row." }),
    ]);
    main.appendChild(details);

    const listing = el("section", { class: "wide" });
    main.appendChild(listing);
    const multiples = el("section", { class: "wide" });
    main.appendChild(multiples);

    const better = (a, b) => (data.objective.maximize ? b[objective] - a[objective] : a[objective] - b[objective]);
    function showTable(selected) {
      state.selected = selected.length;
      count.textContent = `${selected.length} of ${values.length} selected`;
      listing.innerHTML = "";
      listing.appendChild(
        el("h2", {
          text: `Best selected by ${labels[objective]} (${data.objective.maximize ? "max" : "min"}), those that fit in memory first`,
        }),
      );
      const keys = [...params.map((p) => p.key), ...metrics.map((m) => m.key)];
      const head = el("tr", {}, [el("th", { text: "rank" }), ...keys.map((k) => el("th", { text: labels[k] }))]);
      // Those that fit in memory first.
      const order = (a, b) => (a.fits === b.fits ? better(a, b) : a.fits ? -1 : 1);
      const body = el(
        "tbody",
        {},
        [...selected]
          .sort(order)
          .slice(0, 20)
          .map((v) =>
            el("tr", { "data-id": String(v.id), onclick: () => showDetails(v.id) }, [
              el("td", { text: v.rank ? String(v.rank) : "" }),
              ...keys.map((k) => el("td", { text: fmt(v[k], k) })),
            ]),
          ),
      );
      listing.appendChild(el("table", { id: "listing" }, [el("thead", {}, [head]), body]));
    }

    function yamlOf(row) {
      if (row.yaml_full) return row.yaml_full;
      const lines = (data.base_yaml || "").split("\n");
      for (const [at, text] of row.yaml || []) lines[at] = text;
      return lines.join("\n");
    }

    async function showDetails(id) {
      const row = byId.get(id);
      if (!row) return;
      state.shown = id;
      details.innerHTML = "";
      details.appendChild(el("h2", { text: `Configuration ${row.rank ? "#" + row.rank : id}` }));
      details.appendChild(el("p", { text: params.map((p) => `${p.label} ${fmt(row.p[p.key])}`).join(", ") }));
      if (row.m) {
        details.appendChild(
          el("p", { class: "muted" }, [metrics.map((m) => `${m.label}: ${fmt(row.m[m.key], m.key)}`).join(" · ")]),
        );
      }
      if (row.breakdown) {
        const parts = Object.entries(row.breakdown)
          .filter(([, s]) => s > 0)
          .map(([part, seconds]) => ({ part, seconds }));
        const box = el("div", { id: "breakdown" });
        details.appendChild(el("h2", { text: "Step time breakdown" }));
        details.appendChild(box);
        await render("breakdown", box, {
          width: 300,
          data: { values: parts },
          mark: "bar",
          encoding: {
            y: { field: "part", type: "nominal", sort: "-x", title: null },
            x: { field: "seconds", type: "quantitative", title: "seconds per step" },
            tooltip: [{ field: "part" }, { field: "seconds", format: ".4g" }],
          },
        });
      }
      if (row.memory) {
        const order = ["weights", "gradients", "optimizer", "activations", "fragmentation"];
        const parts = order
          .filter((k) => row.memory[k] > 0)
          .map((k, i) => ({ part: k, GiB: row.memory[k] / 2 ** 30, order: i }));
        const box = el("div", { id: "memory" });
        details.appendChild(el("h2", { text: "Memory per GPU (most loaded stage)" }));
        details.appendChild(box);
        await render("memory", box, {
          width: 300,
          height: 40,
          layer: [
            {
              data: { values: parts },
              mark: "bar",
              encoding: {
                x: { field: "GiB", type: "quantitative", stack: "zero", title: "GiB" },
                color: { field: "part", type: "nominal", sort: order, title: null },
                order: { field: "order" },
                tooltip: [{ field: "part" }, { field: "GiB", format: ".2f" }],
              },
            },
            {
              data: { values: [{ usable: row.memory.usable / 2 ** 30 }] },
              mark: { type: "rule", color: "#c00", strokeWidth: 2 },
              encoding: { x: { field: "usable", type: "quantitative" }, tooltip: [{ field: "usable", title: "usable GiB", format: ".1f" }] },
            },
          ],
        });
      }
      const yaml = yamlOf(row);
      if (yaml) {
        const pre = el("pre", { id: "yaml", text: yaml });
        const status = el("span", { class: "muted" });
        const copy = el("button", {
          id: "copy-yaml",
          text: "Copy scenario YAML",
          onclick: async () => {
            try {
              await navigator.clipboard.writeText(yaml);
              status.textContent = " copied";
            } catch (e) {
              const range = document.createRange();
              range.selectNodeContents(pre);
              const sel = window.getSelection();
              sel.removeAllRanges();
              sel.addRange(range);
              status.textContent = document.execCommand("copy") ? " copied" : " selected: copy it with Ctrl+C";
            }
          },
        });
        details.appendChild(el("h2", { text: "Scenario" }));
        const command = (data.command || "") + (row.sets || []).map((s) => " --set " + s).join("");
        details.appendChild(el("p", {}, [el("code", { id: "command", text: command })]));
        details.appendChild(el("div", {}, [copy, status]));
        details.appendChild(pre);
      }
    }

    async function drawScatter() {
      const x = xSelect.value;
      const y = ySelect.value;
      const c = cSelect.value;
      const colour =
        c === "front"
          ? { field: "front", type: "nominal", title: "Pareto front", scale: { domain: [false, true], range: ["#9aa4b2", "#d62728"] } }
          : { field: field(c), type: numeric.has(c) ? "quantitative" : "nominal", title: labels[c] };
      const tip = [...params, ...metrics].map((p) => ({ field: field(p.key), title: p.label }));
      const layers = [
        {
          name: "points",
          mark: { type: "point", filled: true, size: 50 },
          params: [{ name: "brush", select: { type: "interval", encodings: ["x", "y"] } }],
          encoding: {
            x: { field: field(x), type: "quantitative", title: labels[x], scale: { zero: false } },
            y: { field: field(y), type: "quantitative", title: labels[y], scale: { zero: false } },
            color: colour,
            shape: {
              field: "fits",
              type: "nominal",
              title: "fits in memory",
              scale: { domain: [true, false], range: ["circle", "cross"] },
            },
            opacity: { condition: { param: "brush", value: 0.9 }, value: 0.15 },
            tooltip: tip,
          },
        },
        {
          name: "front",
          transform: [{ filter: "datum.front" }],
          mark: { type: "point", shape: "diamond", size: 130, stroke: "#111", strokeWidth: 1.5, filled: false },
          encoding: {
            x: { field: field(x), type: "quantitative" },
            y: { field: field(y), type: "quantitative" },
          },
        },
      ];
      if (frontKeys.length === 2 && frontKeys.includes(x) && frontKeys.includes(y)) {
        layers.push({
          transform: [{ filter: "datum.front" }],
          mark: { type: "line", color: "#111", strokeDash: [4, 3], interpolate: "step-after" },
          encoding: {
            x: { field: field(x), type: "quantitative" },
            y: { field: field(y), type: "quantitative" },
            order: { field: field(x), type: "quantitative" },
          },
        });
      }
      const view = await render("scatter", scatter, { width: 560, height: 380, data: { values }, layer: layers }, labels);
      view.addSignalListener("brush", (name, value) => {
        const ranges = Object.entries(value || {});
        const inside = values.filter((v) => ranges.every(([k, [lo, hi]]) => v[k] >= Math.min(lo, hi) && v[k] <= Math.max(lo, hi)));
        showTable(ranges.length === 0 ? values : inside);
      });
      view.addEventListener("click", (event, item) => {
        if (item && item.datum && item.datum.id !== undefined) showDetails(item.datum.id);
      });
      showTable(values);
    }

    for (const s of [xSelect, ySelect, cSelect]) s.addEventListener("change", drawScatter);
    await drawScatter();

    // The objective against each parameter that varies, side by side.
    if (varying.length > 0) {
      multiples.appendChild(el("h2", { text: `${labels[objective]} against each parameter` }));
      const box = el("div", { id: "multiples" });
      multiples.appendChild(box);
      await render(
        "multiples",
        box,
        {
          data: { values },
          transform: [{ fold: varying.map((p) => field(p.key)), as: ["parameter", "value"] }],
          facet: { field: "parameter", type: "nominal", title: null, sort: varying.map((p) => p.key) },
          columns: 4,
          resolve: { scale: { x: "independent" } },
          spec: {
            width: 200,
            height: 140,
            mark: { type: "point", filled: true, size: 30, opacity: 0.6 },
            encoding: {
              x: { field: "value", type: "ordinal", title: null },
              y: { field: field(objective), type: "quantitative", title: labels[objective], scale: { zero: false } },
              color: { field: "front", type: "nominal", title: "Pareto front", scale: { domain: [false, true], range: ["#9aa4b2", "#d62728"] } },
            },
          },
        },
        labels,
      );
    }
    const best = values.filter((v) => v.rank === 1)[0] || [...values].sort(better)[0];
    if (best) await showDetails(best.id);
  }

  // ---- campaign -----------------------------------------------------------------
  async function campaign() {
    header();
    const main = el("main");
    app.appendChild(main);
    const policies = data.policies || [];
    state.rows = policies.length;
    // Bars of means by policy with their intervals; `get` picks {mean, half_width}.
    const bars = (list, get, title, axis, format) => {
      const values = list.map((p) => ({
        policy: p.name,
        mean: get(p).mean,
        low: get(p).mean - get(p).half_width,
        high: get(p).mean + get(p).half_width,
      }));
      return {
        width: 320,
        data: { values },
        layer: [
          {
            mark: "bar",
            encoding: {
              y: { field: "policy", type: "nominal", title: null },
              x: { field: "mean", type: "quantitative", title, axis },
              tooltip: [{ field: "policy" }, { field: "mean", format }, { field: "low", format }, { field: "high", format }],
            },
          },
          {
            mark: { type: "errorbar", ticks: true, color: "#111" },
            encoding: {
              y: { field: "policy", type: "nominal" },
              x: { field: "low", type: "quantitative", title },
              x2: { field: "high" },
            },
          },
        ],
      };
    };
    // Tokens in prefixes (4T), not in thirteen digits.
    const interval = (key, title, percent) =>
      bars(policies, (p) => p[key], title, percent ? { format: ".0%" } : key.startsWith("tokens") ? { format: "~s" } : {}, ".4g");
    // To a token target: the days and the cost. In fixed days (campaign --days),
    // where every policy lasts as long and costs about the same: the tokens
    // trained and the tokens a dollar buys.
    const days = data.fixed_days > 0;
    const charts = [
      ["ettr", "ettr", "effective training time ratio (95 % interval)", true],
      days
        ? ["tokens", "tokens", `tokens trained in ${fmt(data.fixed_days)} days (95 % interval)`, false]
        : ["days", "wall_days", "wall-clock days (95 % interval)", false],
      ["goodput", "goodput", "goodput, tokens/s (95 % interval)", false],
    ];
    const price = days ? ["tokens_per_usd", "tokens_per_usd", "tokens per US$ (95 % interval)", false] : ["cost", "cost_usd", "cost, US$ (95 % interval)", false];
    if (policies.length > 0 && policies[0][price[1]]) charts.push(price);
    for (const [id, key, title, percent] of charts) {
      const box = el("div", { id });
      main.appendChild(el("section", {}, [el("h2", { text: title }), box]));
      await render(id, box, interval(key, title, percent));
    }
    if (policies.length > 1) {
      // Differences from the first policy, seed by seed: common random numbers
      // make them far tighter than the intervals above.
      const others = policies.slice(1);
      const title = `effective training time ratio minus ${policies[0].name}'s (paired, 95 % interval)`;
      const box = el("div", { id: "paired" });
      main.appendChild(el("section", {}, [el("h2", { text: title }), box]));
      await render("paired", box, bars(others, (p) => p.ettr_minus_first, "difference", { format: "+.2%" }, "+.5f"));
    }
    const lost = [];
    for (const p of policies) {
      for (const [cause, x] of Object.entries(p.lost_hours || {})) lost.push({ policy: p.name, cause, hours: x.mean });
    }
    const box = el("div", { id: "lost" });
    const section = el("section", {}, [el("h2", { text: "Hours lost by cause (mean over seeds)" }), box]);
    main.appendChild(section);
    notes(section);
    await render("lost", box, {
      width: 320,
      data: { values: lost },
      mark: "bar",
      encoding: {
        y: { field: "policy", type: "nominal", title: null },
        x: { field: "hours", type: "quantitative", stack: "zero", title: "hours" },
        color: { field: "cause", type: "nominal" },
        tooltip: [{ field: "policy" }, { field: "cause" }, { field: "hours", format: ".1f" }],
      },
    });
    await failureTimeline(main, policies.map((p) => p.name));
  }

  // One seed's interruptions over the campaign, a lane a policy: when each
  // began, what failed, and the hours it lost (down, and work rolled back).
  async function failureTimeline(main, names) {
    const timeline = data.timeline;
    if (!timeline) return;
    const points = timeline.interruptions || [];
    const title = `Failure timeline of seed ${timeline.seed}: each interruption, sized by the hours it lost`;
    const box = el("div", { id: "timeline" });
    const section = el("section", { class: "wide" }, [el("h2", { text: title }), box]);
    for (const note of timeline.notes || []) section.appendChild(el("p", { class: "muted", text: note }));
    if (points.length === 0) section.appendChild(el("p", { class: "muted", text: "No interruption in this seed." }));
    main.appendChild(section);
    await render(
      "timeline",
      box,
      {
        width: 760,
        data: { values: points },
        mark: { type: "circle", opacity: 0.7 },
        encoding: {
          x: { field: "day", type: "quantitative", title: "day of the campaign", scale: { zero: true } },
          y: { field: "policy", type: "nominal", sort: names, title: null },
          size: { field: "hours_lost", type: "quantitative", title: "hours lost", scale: { range: [12, 600] } },
          color: { field: "cause", type: "nominal", title: "cause" },
        },
      },
      {
        policy: "policy",
        day: "day",
        cause: "cause",
        domain: "domain",
        nodes: "nodes",
        hours_lost: "hours lost",
        downtime_h: "down (h)",
        lost_work_h: "work rolled back (h)",
      },
    );
  }

  // ---- one step: estimate and simulate ---------------------------------------------
  async function step() {
    header();
    const main = el("main");
    app.appendChild(main);
    state.rows = (data.breakdown || []).length;
    const box = el("div", { id: "breakdown" });
    const section = el("section", {}, [el("h2", { text: "Step time by part and engine" }), box]);
    main.appendChild(section);
    notes(section);
    await render("breakdown", box, {
      width: 320,
      data: { values: data.breakdown },
      mark: "bar",
      encoding: {
        y: { field: "part", type: "nominal", title: null },
        yOffset: { field: "engine" },
        x: { field: "seconds", type: "quantitative", title: "seconds per step" },
        color: { field: "engine", type: "nominal" },
        tooltip: [{ field: "engine" }, { field: "part" }, { field: "seconds", format: ".4g" }],
      },
    });
    const wait = el("div", { id: "wait" });
    main.appendChild(el("section", {}, [el("h2", { text: "Waiting per stage (replica 0)" }), wait]));
    await render("wait", wait, {
      width: 320,
      data: { values: data.wait || [] },
      mark: "bar",
      encoding: {
        x: { field: "stage", type: "ordinal" },
        y: { field: "seconds", type: "quantitative", title: "seconds waiting on inputs and sends" },
        tooltip: [{ field: "stage" }, { field: "seconds", format: ".4g" }],
      },
    });
  }

  // ---- campaign --vary: figures against the varied key -------------------------------
  async function sensitivity() {
    header();
    const main = el("main");
    app.appendChild(main);
    const values = data.values || [];
    state.rows = values.length;
    const order = [...new Set(values.slice().sort((a, b) => a.order - b.order).map((v) => v.value))];
    let first = true;
    for (const [key, title] of Object.entries(data.figures || {})) {
      const points = values.map((v) => ({ value: v.value, policy: v.policy, mean: v[key].mean, low: v[key].low, high: v[key].high }));
      const box = el("div", { id: key });
      const section = el("section", {}, [el("h2", { text: `${title} against ${data.key} (95 % interval)` }), box]);
      main.appendChild(section);
      if (first) notes(section);
      first = false;
      const x = { field: "value", type: "ordinal", sort: order, title: data.key };
      await render(key, box, {
        width: 420,
        data: { values: points },
        layer: [
          {
            mark: { type: "line", point: true },
            encoding: {
              x,
              y: { field: "mean", type: "quantitative", title, scale: { zero: false } },
              color: { field: "policy", type: "nominal" },
              tooltip: [{ field: "policy" }, { field: "value" }, { field: "mean", format: ".4g" }, { field: "low", format: ".4g" }, { field: "high", format: ".4g" }],
            },
          },
          {
            mark: { type: "errorbar", ticks: true },
            encoding: {
              x,
              y: { field: "low", type: "quantitative", title },
              y2: { field: "high" },
              color: { field: "policy", type: "nominal" },
            },
          },
        ],
      });
    }
  }

  const kinds = { configurations, campaign, sensitivity, step };
  const draw = kinds[data.kind];
  if (!draw) {
    app.textContent = `This report's kind (${data.kind}) is not one this page draws.`;
    return;
  }
  draw()
    .then(() => {
      state.ready = true;
    })
    .catch((e) => {
      state.failed = true;
      console.error(e);
      app.appendChild(el("pre", { text: String(e && e.stack ? e.stack : e) }));
    });
})();
