// The leaderboard page: tables, filters, sorting and the saturation plot, drawn from the JSON in #board-data.
// Everything from a submission is written with textContent or as an SVG attribute value, never parsed as HTML.
"use strict";
(function () {
  const board = JSON.parse(document.getElementById("board-data").textContent);
  const SVG = "http://www.w3.org/2000/svg";
  const MODES = ["efficient", "mixed"];
  const QUALITY = [["correct", "accuracy %", 100], ["recall_at_k", "Recall@k %", 100], ["token_f1", "token F1 %", 100],
                   ["rouge_l", "ROUGE-L %", 100], ["hallucinated", "hallucination %", 100],
                   ["trap_safe", "trap safety %", 100], ["selective", "selective x100", 100]];
  const COST = [["llm_calls", "LLM calls / session"], ["tokens", "tokens / session"],
                ["ingest_s", "ingest s / session"], ["items_per_patient", "items / patient"]];
  const COLORS = ["#2563a8", "#d9480f", "#2b8a3e", "#862e9c", "#c92a2a", "#0b7285", "#e67700", "#5c940d",
                  "#364fc7", "#a61e4d"];
  const state = {paradigm: "", backbone: "", paper: true, completeOnly: false, verifiedOnly: false, mode: "efficient",
                 curve: "correct", sort: {}};

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function svg(tag, attrs) {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
    return node;
  }
  function fmt(value, digits) {
    return value === null || value === undefined ? "-" : Number(value).toFixed(digits === undefined ? 1 : digits);
  }
  function safeHref(url) {  // (a submitted link is shown only when it is http(s) or a relative path)
    if (typeof url !== "string") return null;
    if (/^https?:\/\//i.test(url)) return url;
    if (/^[A-Za-z0-9._\/-]+$/.test(url) && !/^\//.test(url)) return url;
    return null;
  }
  function label(row) { return row.system + " / " + row.backbone; }

  function visibleRows() {
    return board.rows.filter((row) =>
      (!state.paradigm || row.paradigm === state.paradigm) &&
      (!state.backbone || row.backbone === state.backbone) &&
      (state.paper || row.kind !== "paper") &&
      (!state.completeOnly || row.kind === "paper" || row.complete) &&
      (!state.verifiedOnly || row.kind === "paper" || row.verification === "hidden gold"));
  }

  function systemCell(row, withDetails, tableId) {
    const td = el("td", {class: "text"});
    if (withDetails) {
      const button = el("button", {class: "more", type: "button", "aria-expanded": "false",
                                   title: "provenance"}, "+");
      button.addEventListener("click", () => toggleDetails(button, row, tableId));
      td.appendChild(button);
    }
    td.appendChild(el("span", {class: "name"}, row.system));
    if (row.kind === "paper") td.appendChild(el("span", {class: "badge", title: board.paper.note}, "paper, own data"));
    else if (row.kind === "ceiling") {
      td.appendChild(el("span", {class: "badge ceiling", title: "a reference, not a system: each question's " +
        "evidence sessions plus distractors; never ranked"}, "ceiling"));
    }
    if (row.kind !== "run") {
      // (a reference row is not ranked: how a submission was verified says nothing of it)
    } else if (row.verification === "hidden gold") {
      td.appendChild(el("span", {class: "badge verified", title: "scored by the board against a hidden-gold " +
        "release's sealed gold: its answers could not have been written from the gold"}, "verified (hidden gold)"));
    } else if (row.verification === "public gold") {
      td.appendChild(el("span", {class: "badge self-reported", title: "run on a public release: its answers and " +
        "retrieved sessions are self-reported; the board re-scored them and checked they are consistent, which " +
        "cannot rule out answers written from the public gold"}, "self-reported (public gold)"));
    }
    if (row.kind !== "paper" && !row.complete) {
      td.appendChild(el("span", {class: "badge slice", title: row.coverage}, "slice"));
    }
    return td;
  }

  function toggleDetails(button, row, tableId) {
    const tr = button.closest("tr");
    const next = tr.nextElementSibling;
    if (next && next.classList.contains("details")) {
      next.remove();
      button.setAttribute("aria-expanded", "false");
      button.textContent = "+";
      return;
    }
    const details = el("tr", {class: "details"});
    const td = el("td", {colspan: String(tr.children.length)});
    const dl = el("dl");
    const add = (key, value) => {
      if (value === null || value === undefined || value === "") return;
      dl.appendChild(el("dt", {}, key));
      const dd = el("dd");
      if ((key === "samples" || key === "link") && safeHref(value)) {
        dd.appendChild(el("a", {href: safeHref(value), rel: "noopener noreferrer nofollow"}, value));
      } else {
        dd.textContent = typeof value === "object" ? JSON.stringify(value) : String(value);
      }
      dl.appendChild(dd);
    };
    add("coverage", row.coverage);
    add("memory", row.memory);
    for (const [key, value] of Object.entries(row.provenance)) add(key, value);
    td.appendChild(dl);
    details.appendChild(td);
    tr.after(details);
    button.setAttribute("aria-expanded", "true");
    button.textContent = "-";
  }

  // A table: columns are [key, title, value(row), format(value)]; rows sort by the clicked column.
  function drawTable(id, columns, rows, withDetails) {
    const table = document.getElementById(id);
    table.replaceChildren();
    const head = el("tr");
    const sort = state.sort[id] || {key: (columns.find((c) => c[0] === "mean") || columns[columns.length - 1])[0],
                                    dir: "descending"};
    for (const [key, title] of columns) {
      const th = el("th", {"data-key": key, scope: "col"}, title);
      if (key === "system" || key === "paradigm" || key === "backbone") th.classList.add("text");
      if (sort.key === key) th.setAttribute("aria-sort", sort.dir);
      th.addEventListener("click", () => {
        const dir = sort.key === key && sort.dir === "descending" ? "ascending" : "descending";
        state.sort[id] = {key: key, dir: dir};
        render();
      });
      head.appendChild(th);
    }
    const thead = el("thead");
    thead.appendChild(head);
    table.appendChild(thead);
    const column = columns.find((c) => c[0] === sort.key) || columns[columns.length - 1];
    const sign = sort.dir === "ascending" ? 1 : -1;
    const sorted = rows.slice().sort((a, b) => {
      // the ceiling is a reference, never ranked among the systems: it stays on top whatever the order
      if ((a.kind === "ceiling") !== (b.kind === "ceiling")) return a.kind === "ceiling" ? -1 : 1;
      // verified rows rank above self-reported ones: a self-reported number cannot outrank a verified one
      const verified = (r) => r.verification === "hidden gold";
      if (verified(a) !== verified(b)) return verified(a) ? -1 : 1;
      const x = column[2](a), y = column[2](b);
      if (x === null || x === undefined) return (y === null || y === undefined) ? 0 : 1;
      if (y === null || y === undefined) return -1;
      return (typeof x === "string" ? x.localeCompare(y) : x - y) * sign;
    });
    const body = el("tbody");
    for (const row of sorted) {
      const tr = el("tr", {"data-id": row.id, class: row.kind});
      for (const [key, , value, format] of columns) {
        if (key === "system") { tr.appendChild(systemCell(row, withDetails, id)); continue; }
        const v = value(row);
        const td = el("td", {}, format ? format(v) : v);
        if (key === "paradigm" || key === "backbone") td.classList.add("text");
        if (v === null || v === undefined) td.classList.add("missing");
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
    table.appendChild(body);
    if (!sorted.length) {
      const tr = el("tr");
      tr.appendChild(el("td", {colspan: String(columns.length), class: "text"}, "no row matches the filters"));
      body.appendChild(tr);
    }
  }

  const textColumns = [["system", "system", (r) => r.system],
                       ["paradigm", "paradigm", (r) => board.paradigms[r.paradigm] || r.paradigm],
                       ["backbone", "answering model", (r) => r.backbone]];

  // The means come first, beside the names: the column the table is sorted by is on screen at any width, and the
  // per-type figures follow, mode by mode.
  function mainColumns() {
    const columns = textColumns.slice();
    const cell = (mode, code, title) => [mode + ":" + code, title, (r) => (r.main[mode] || {})[code], (v) => fmt(v)];
    columns.push(["mean", "mean", (r) => r.mean, (v) => fmt(v)]);
    for (const mode of MODES) columns.push(cell(mode, "mean", "mean " + mode.slice(0, 3)));
    for (const mode of MODES) {
      for (const code of board.types) columns.push(cell(mode, code, code + " " + mode.slice(0, 3)));
    }
    return columns;
  }
  function qualityColumns() {
    return textColumns.concat(QUALITY.map(([key, title, scale]) =>
      [key, title, (r) => { const v = (r.quality[state.mode] || {})[key]; return v === null || v === undefined ?
        null : v * scale; }, (v) => fmt(v)]));
  }
  function costColumns() {
    return textColumns.concat(COST.map(([key, title]) => [key, title, (r) => r.cost[key],
      (v) => v === null || v === undefined ? "-" : Number(v).toPrecision(4).replace(/\.?0+$/, "")]));
  }

  function drawPlot(rows) {
    const plot = document.getElementById("saturation");
    const legend = document.getElementById("legend");
    plot.replaceChildren();
    legend.replaceChildren();
    const W = 720, H = 330, L = 52, R = 14, T = 14, B = 42;
    const series = [];
    rows.filter((r) => r.kind === "run").forEach((row, index) => {
      for (const mode of MODES) {
        const points = ((row.curves[mode] || {})[state.curve]) || [];
        if (points.length) series.push({row: row, mode: mode, points: points, color: COLORS[index % COLORS.length]});
      }
    });
    const xs = series.flatMap((s) => s.points.map((p) => p[0]));
    const xmin = xs.length ? Math.min(...xs) : 10, xmax = xs.length ? Math.max(...xs) : 100;
    const x = (c) => L + (xmax === xmin ? 0.5 : (c - xmin) / (xmax - xmin)) * (W - L - R);
    const y = (v) => T + (1 - v) * (H - T - B);
    plot.setAttribute("viewBox", "0 0 " + W + " " + H);
    for (let tick = 0; tick <= 1.0001; tick += 0.25) {
      plot.appendChild(svg("line", {x1: L, x2: W - R, y1: y(tick), y2: y(tick), stroke: "#e3e7ed"}));
      const t = svg("text", {x: L - 6, y: y(tick) + 4, "text-anchor": "end", "font-size": 11, fill: "#5b6677"});
      t.textContent = Math.round(tick * 100) + "%";
      plot.appendChild(t);
    }
    for (const c of [...new Set(xs)].sort((a, b) => a - b)) {
      const t = svg("text", {x: x(c), y: H - B + 16, "text-anchor": "middle", "font-size": 11, fill: "#5b6677"});
      t.textContent = String(c);
      plot.appendChild(t);
    }
    const xl = svg("text", {x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle", "font-size": 12, fill: "#1d2430"});
    xl.textContent = "checkpoint (regular sessions read)";
    plot.appendChild(xl);
    const yl = svg("text", {x: 14, y: (T + H - B) / 2, "font-size": 12, fill: "#1d2430",
                            transform: "rotate(-90 14 " + (T + H - B) / 2 + ")", "text-anchor": "middle"});
    yl.textContent = state.curve === "correct" ? "accuracy" : "Recall@k";
    plot.appendChild(yl);
    if (!series.length) {
      const t = svg("text", {x: W / 2, y: H / 2, "text-anchor": "middle", "font-size": 13, fill: "#5b6677",
                             class: "empty"});
      t.textContent = "no run shown has this curve (retrieval-only runs have Recall@k, not accuracy)";
      plot.appendChild(t);
      return;
    }
    for (const s of series) {
      // a line joins neighbouring checkpoints only: a run asked at 20 and 100 is two points with their intervals,
      // not a trend over the checkpoints it never measured
      const runs = [];
      for (const p of s.points) {
        const last = runs.length ? runs[runs.length - 1] : null;
        if (last && p[0] - last[last.length - 1][0] === board.checkpoint_every) last.push(p); else runs.push([p]);
      }
      for (const part of runs) {
        const band = part.filter((p) => p[2] !== null && p[3] !== null);
        if (band.length > 1) {
          const upper = band.map((p) => x(p[0]) + "," + y(Math.min(1, p[3])));
          const lower = band.slice().reverse().map((p) => x(p[0]) + "," + y(Math.max(0, p[2])));
          plot.appendChild(svg("polygon", {points: upper.concat(lower).join(" "), fill: s.color, opacity: 0.06}));
        } else if (band.length === 1) {
          const p = band[0];
          plot.appendChild(svg("line", {x1: x(p[0]), x2: x(p[0]), y1: y(Math.min(1, p[3])), y2: y(Math.max(0, p[2])),
                                        stroke: s.color, "stroke-width": 1.5, opacity: 0.5, class: "interval"}));
        }
        const path = svg("polyline", {points: part.map((p) => x(p[0]) + "," + y(p[1])).join(" "), fill: "none",
                                      stroke: s.color, "stroke-width": 2, "data-id": s.row.id, "data-mode": s.mode,
                                      class: "curve"});
        if (s.mode === "mixed") path.setAttribute("stroke-dasharray", "6 4");
        const title = svg("title");
        title.textContent = label(s.row) + " [" + s.mode + "]";
        path.appendChild(title);
        plot.appendChild(path);
      }
      for (const p of s.points) plot.appendChild(svg("circle", {cx: x(p[0]), cy: y(p[1]), r: 2.5, fill: s.color}));
      const li = el("li");
      const swatch = el("span", {class: "swatch"});
      swatch.style.background = s.color;
      if (s.mode === "mixed") swatch.style.background = "repeating-linear-gradient(90deg," + s.color + " 0 6px," +
        "transparent 6px 10px)";
      li.appendChild(swatch);
      li.appendChild(document.createTextNode(label(s.row) + " [" + s.mode + "]"));
      legend.appendChild(li);
    }
  }

  function render() {
    const rows = visibleRows();
    drawTable("main-table", mainColumns(), rows, true);
    const runs = rows.filter((r) => r.kind === "run");
    drawTable("quality-table", qualityColumns(), rows.filter((r) => r.kind !== "paper"), false);
    drawTable("cost-table", costColumns(), runs, false);
    drawPlot(rows);
    document.getElementById("shown").textContent = rows.length + " of " + board.rows.length + " rows shown";
  }

  function options(id, values, labels) {
    const select = document.getElementById(id);
    for (const value of values) select.appendChild(el("option", {value: value}, labels ? labels[value] : value));
    return select;
  }

  options("paradigm", [...new Set(board.rows.map((r) => r.paradigm))].sort(), board.paradigms)
    .addEventListener("change", (e) => { state.paradigm = e.target.value; render(); });
  options("backbone", [...new Set(board.rows.map((r) => r.backbone))].sort())
    .addEventListener("change", (e) => { state.backbone = e.target.value; render(); });
  document.getElementById("paper").addEventListener("change", (e) => { state.paper = e.target.checked; render(); });
  document.getElementById("verified").addEventListener("change",
    (e) => { state.verifiedOnly = e.target.checked; render(); });
  document.getElementById("complete").addEventListener("change",
    (e) => { state.completeOnly = e.target.checked; render(); });
  document.getElementById("mode").addEventListener("change", (e) => { state.mode = e.target.value; render(); });
  document.getElementById("curve").addEventListener("change", (e) => { state.curve = e.target.value; render(); });
  // The curve first shown is the one more runs have (retrieval-only runs have Recall@k and no accuracy).
  const having = (metric) => board.rows.filter((r) => Object.values(r.curves).some((c) => c[metric])).length;
  if (having("recall_at_k") > having("correct")) {
    state.curve = "recall_at_k";
    document.getElementById("curve").value = "recall_at_k";
  }
  const leftOut = document.getElementById("left-out");
  for (const reason of board.left_out) leftOut.appendChild(el("li", {}, reason));
  if (board.left_out.length) document.getElementById("left-out-card").hidden = false;
  render();
  document.body.setAttribute("data-ready", "true");
})();
