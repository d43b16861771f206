// xmem's page script. It adds to a page that reads whole without it: a
// module and memory-space selector, the live set at any point of a timeline
// (from the intervals analysis wrote into #xmem-data), sorting and filtering
// of tables, and zoom and search in the flame graphs. It shows the numbers
// analysis computed; the only thing it derives is which intervals cover a
// point. It requests nothing: no network, no fonts, no images.
(function () {
  "use strict";
  var source = document.getElementById("xmem-data");
  var data = source ? JSON.parse(source.textContent) : { strings: [], spaces: [], allocators: [], top: 20 };
  var S = data.strings;
  var SVG = "http://www.w3.org/2000/svg";
  document.documentElement.classList.add("js");

  // ---- Formatting, as the text report formats --------------------------------

  /** Binary units with one decimal, rounded half to even as xmem's text is. */
  function bytes(n) {
    if (n < 0) return "-" + bytes(-n);
    if (n < 1024) return n + " B";
    var exp = 1;
    while (n / Math.pow(1024, exp) >= 1024 && exp < 6) exp++;
    var tenths = (n / Math.pow(1024, exp)) * 10;
    var whole = Math.floor(tenths);
    var rounded = tenths - whole === 0.5 ? whole + (whole % 2) : Math.round(tenths);
    return (rounded / 10).toFixed(1) + " " + "KMGTPE".charAt(exp - 1) + "iB";
  }
  function percent(part, total) {
    return total > 0 ? ((part / total) * 100).toFixed(1) + "%" : "";
  }
  function fileAndLine(path) {
    return path.slice(path.lastIndexOf("/") + 1);
  }
  function plural(n, word) {
    return n + " " + word + (n === 1 ? "" : "s");
  }
  function milliseconds(ps) {
    return (ps / 1e9).toFixed(3) + " ms";
  }
  function el(tag, attributes, children) {
    var node = document.createElement(tag);
    for (var key in attributes || {}) {
      if (key === "text") node.textContent = attributes[key];
      else node.setAttribute(key, attributes[key]);
    }
    (children || []).forEach(function (child) {
      if (child) node.appendChild(child);
    });
    return node;
  }
  function sums(differences) {
    var out = new Array(differences.length);
    var total = 0;
    for (var i = 0; i < differences.length; i++) out[i] = total += differences[i];
    return out;
  }
  function typing(event) {
    var tag = event.target && event.target.tagName;
    return tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA";
  }

  // ---- Tables: sort by a column, filter by text ------------------------------

  /** A cell's value for sorting: the exact bytes where the page gave them, else a number read from the text. */
  function cellValue(cell) {
    if (cell.dataset.bytes !== undefined) return Number(cell.dataset.bytes);
    var text = cell.textContent.trim();
    if (!cell.classList.contains("num")) return text.toLowerCase();
    var match = /^([+-]?[\d,.]+)\s*(B|KiB|MiB|GiB|TiB|PiB|EiB|%)?/.exec(text);
    if (!match) return -Infinity;
    var units = { KiB: 1, MiB: 2, GiB: 3, TiB: 4, PiB: 5, EiB: 6 };
    return parseFloat(match[1].replace(/,/g, "")) * Math.pow(1024, units[match[2]] || 0);
  }
  function compare(a, b) {
    if (typeof a === "number" && typeof b === "number") return a - b;
    return String(a).localeCompare(String(b));
  }
  /** Clicking a column's heading sorts the rows by it, again the other way. */
  function sortable(table, headerRow, bodyRows, onSort) {
    Array.prototype.forEach.call(headerRow.cells, function (th, column) {
      th.classList.add("sortable");
      th.title = "sort by this column";
      th.addEventListener("click", function () {
        var descending = th.dataset.sorted !== "descending";
        Array.prototype.forEach.call(headerRow.cells, function (other) {
          delete other.dataset.sorted;
        });
        th.dataset.sorted = descending ? "descending" : "ascending";
        if (onSort) return onSort(column, descending);
        var rows = bodyRows();
        rows.sort(function (a, b) {
          var order = compare(cellValue(a.cells[column]), cellValue(b.cells[column]));
          return descending ? -order : order;
        });
        rows.forEach(function (row) {
          row.parentNode.appendChild(row);
        });
      });
    });
  }
  function filterBox(placeholder, onInput) {
    var input = el("input", { type: "search", class: "table-filter", placeholder: placeholder });
    input.addEventListener("input", function () {
      onInput(input.value.trim().toLowerCase());
    });
    return input;
  }
  function enhanceStaticTables() {
    Array.prototype.forEach.call(document.querySelectorAll("table"), function (table) {
      if (table.closest(".live-panel") || !table.rows.length) return;
      var header = table.rows[0];
      var body = function () {
        return Array.prototype.slice.call(table.rows, 1);
      };
      sortable(table, header, body);
      if (body().length >= 5) {
        var box = filterBox("filter rows", function (query) {
          body().forEach(function (row) {
            row.hidden = query !== "" && row.textContent.toLowerCase().indexOf(query) < 0;
          });
        });
        table.parentNode.insertBefore(el("div", { class: "table-tools" }, [box]), table);
      }
    });
  }

  // ---- Charts: pointer and point of the timeline -----------------------------

  /** A timeline chart: its plot area maps pixels to the chart's x values. */
  function chartAxis(svg) {
    var area = svg && svg.querySelector("rect.plot-area");
    if (!area) return null;
    var x = Number(area.getAttribute("x")), width = Number(area.getAttribute("width"));
    var from = Number(area.dataset.xFrom), to = Number(area.dataset.xTo);
    var top = Number(area.getAttribute("y")), height = Number(area.getAttribute("height"));
    var cursor = document.createElementNS(SVG, "line");
    cursor.setAttribute("class", "cursor");
    cursor.setAttribute("y1", top);
    cursor.setAttribute("y2", top + height);
    cursor.style.display = "none";
    svg.appendChild(cursor);
    return {
      svg: svg,
      /** The x value under a pointer event. */
      valueAt: function (event) {
        var point = svg.createSVGPoint();
        point.x = event.clientX;
        point.y = event.clientY;
        var local = point.matrixTransform(svg.getScreenCTM().inverse());
        var fraction = Math.min(1, Math.max(0, (local.x - x) / width));
        return from + fraction * (to - from);
      },
      mark: function (value) {
        var px = x + (to > from ? ((value - from) / (to - from)) * width : 0);
        cursor.setAttribute("x1", px);
        cursor.setAttribute("x2", px);
        cursor.style.display = "";
      },
    };
  }

  /** The panel under a chart that shows what is live at a point; ←/→ move it. */
  var activePanel = null;
  function followPointer(axis, panel, positionAt) {
    if (!axis) return;
    axis.svg.classList.add("pointable");
    axis.svg.addEventListener("mousemove", function (event) {
      panel.show(positionAt(axis.valueAt(event)), false);
    });
    axis.svg.addEventListener("mouseleave", function () {
      panel.show(panel.fixed, false);
    });
    axis.svg.addEventListener("click", function (event) {
      panel.show(positionAt(axis.valueAt(event)), true);
    });
  }
  document.addEventListener("keydown", function (event) {
    if (!activePanel || typing(event) || event.altKey || event.ctrlKey || event.metaKey) return;
    var moves = {
      ArrowLeft: function (p) { return p.fixed - 1; },
      ArrowRight: function (p) { return p.fixed + 1; },
      p: function (p) { return p.peak(); },
      n: function (p) { return p.nextPeak(); },
    };
    var move = moves[event.key];
    if (!move || activePanel.section.hidden) return;
    event.preventDefault();
    activePanel.show(move(activePanel), true);
  });

  function controls(panel, length, hasPeaks) {
    var slider = el("input", { type: "range", min: "0", max: String(Math.max(0, length - 1)), class: "point" });
    slider.addEventListener("input", function () {
      panel.show(Number(slider.value), true);
    });
    function button(label, title, move) {
      var b = el("button", { type: "button", title: title, text: label });
      b.addEventListener("click", function () {
        panel.show(move(), true);
      });
      return b;
    }
    var bar = el("div", { class: "live-controls" }, [
      button("◀", "previous event (←)", function () { return panel.fixed - 1; }),
      slider,
      button("▶", "next event (→)", function () { return panel.fixed + 1; }),
      button("peak", "the peak (p)", function () { return panel.peak(); }),
      hasPeaks ? button("next peak", "the next of the distinct peaks (n)", function () { return panel.nextPeak(); }) : null,
    ]);
    return { bar: bar, slider: slider };
  }

  // ---- The live set of a memory space at a point of program order ------------

  function describe(space, index) {
    var b = space.buffers[index];
    if (typeof b === "number") return { index: index, size: b, described: false };
    return {
      index: index, described: true, instruction: S[b[0]], size: b[1], unpadded: b[2], category: S[b[3]],
      shape: S[b[4]], opName: S[b[5]], source: b[6] === null ? null : S[b[6]], id: b[7],
    };
  }
  /** The buffers live after event `position`: the always-live ones, then each interval that covers it. */
  function liveBuffers(space, position) {
    var live = [];
    for (var i = 0; i < space.always_live; i++) live.push(space.described[i]);
    var v = space.intervals;
    for (var k = 0; k < v.length; k += 3) {
      if (v[k + 1] <= position && position < v[k + 2]) live.push(space.described[v[k]]);
    }
    return live;
  }
  var BUFFER_COLUMNS = [
    { name: "Size", kind: "bytes", value: function (b) { return b.size; } },
    { name: "Unpadded", kind: "bytes", value: function (b) { return b.unpadded; } },
    { name: "Category", value: function (b) { return b.category; } },
    { name: "Instruction", value: function (b) { return b.instruction; } },
    { name: "Shape", wrap: true, value: function (b) { return b.shape; } },
    { name: "Op name", wrap: true, value: function (b) { return b.opName; } },
    { name: "Source", value: function (b) { return b.source === null ? "" : fileAndLine(b.source); } },
  ];
  function largestFirst(a, b) {
    return b.size - a.size || (a.id === undefined ? 0 : a.id - b.id);
  }

  /**
   * A table of records that sorts, filters and shows the `top` first rows,
   * with one row for the rest; the summary rows (what is not described one
   * by one) stay last, their bytes in the column `totalColumn`, as each
   * record's `size` counts there.
   */
  function recordTable(columns, className, totalColumn, rowAttributes) {
    var table = el("table", { class: className });
    var header = el("tr", {}, columns.map(function (c) { return el("th", { text: c.name }); }));
    table.appendChild(header);
    var state = { records: [], summaries: [], query: "", sortColumn: null, descending: true, all: false };
    var showAll = el("button", { type: "button", class: "show-all" });
    showAll.addEventListener("click", function () {
      state.all = !state.all;
      draw();
    });
    var box = filterBox("filter: instruction, op name, source, category…", function (query) {
      state.query = query;
      draw();
    });
    sortable(table, header, null, function (column, descending) {
      state.sortColumn = column;
      state.descending = descending;
      draw();
    });
    function matches(record) {
      if (!state.query) return true;
      return columns.some(function (c) {
        return String(c.value(record)).toLowerCase().indexOf(state.query) >= 0;
      });
    }
    function draw() {
      while (table.rows.length > 1) table.deleteRow(1);
      var rows = state.records.filter(matches);
      if (state.sortColumn !== null) {
        var column = columns[state.sortColumn];
        rows.sort(function (a, b) {
          var order = compare(column.value(a), column.value(b));
          return state.descending ? -order : order;
        });
      }
      var shown = state.all ? rows : rows.slice(0, data.top);
      shown.forEach(function (record) {
        var tr = el("tr", rowAttributes(record), columns.map(function (c) {
          var value = c.value(record);
          var td = el("td", { text: c.kind === "bytes" ? bytes(value) : String(value) });
          if (c.kind) td.className = "num";
          if (c.wrap) td.className = "wrap";
          if (c.kind === "bytes") td.dataset.bytes = value;
          return td;
        }));
        table.appendChild(tr);
      });
      var rest = rows.slice(shown.length);
      if (rest.length) {
        var restBytes = rest.reduce(function (t, r) { return t + r.size; }, 0);
        table.appendChild(summaryRow(columns.length, restBytes, plural(rest.length, "more row") + " (show all)", "rest"));
      }
      state.summaries.forEach(function (s) {
        table.appendChild(summaryRow(columns.length, s.bytes, s.label, "summary"));
      });
      showAll.hidden = rows.length <= data.top;
      showAll.textContent = state.all ? "show the top " + data.top : "show all " + rows.length;
    }
    function summaryRow(width, total, label, className) {
      var cells = [];
      for (var i = 0; i < width - 1; i++) cells.push(el("td"));
      cells[totalColumn] = el("td", { class: "num", text: bytes(total) });
      cells[totalColumn].dataset.bytes = total;
      cells.push(el("td", { text: label }));
      return el("tr", { class: className }, cells);
    }
    return {
      tools: el("div", { class: "table-tools" }, [box, showAll]),
      table: table,
      set: function (records, summaries) {
        state.records = records;
        state.summaries = summaries;
        draw();
      },
    };
  }

  function groupTable(title, header, groups, total) {
    var rows = groups.slice(0, data.top).map(function (g) {
      return el("tr", {}, [
        el("td", { class: "num", text: bytes(g.bytes), "data-bytes": String(g.bytes) }),
        el("td", { class: "num", text: percent(g.bytes, total) }),
        el("td", { class: "num", text: String(g.count) }),
        el("td", { text: g.label }),
      ]);
    });
    var rest = groups.slice(data.top);
    if (rest.length) {
      var restBytes = rest.reduce(function (t, g) { return t + g.bytes; }, 0);
      var restCount = rest.reduce(function (t, g) { return t + g.count; }, 0);
      rows.push(el("tr", {}, [
        el("td", { class: "num", text: bytes(restBytes) }),
        el("td", { class: "num", text: percent(restBytes, total) }),
        el("td", { class: "num", text: String(restCount) }),
        el("td", { text: rest.length + " more groups" }),
      ]));
    }
    var head = el("tr", {}, header.map(function (h) { return el("th", { text: h }); }));
    return el("div", { class: "live-groups" }, [el("h4", { text: title }), el("table", { class: "groups" }, [head].concat(rows))]);
  }
  /** Bytes and count per key, largest first, then by key: as analysis groups a live set. */
  function groupBy(records, key) {
    var groups = {};
    var list = [];
    records.forEach(function (r) {
      var k = key(r);
      if (!groups[k]) list.push((groups[k] = { key: k, bytes: 0, count: 0 }));
      groups[k].bytes += r.size;
      groups[k].count += 1;
    });
    return list.sort(function (a, b) {
      return b.bytes - a.bytes || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
    });
  }

  function spacePanel(section, id, runs) {
    runs.forEach(function (space) {
      space.heapAfter = sums(space.heap);
      space.described = space.buffers.map(function (_, i) { return describe(space, i); });
    });
    var figure = section.querySelector("figure.chart.timeline, figure.chart.overlay");
    var axis = chartAxis(figure && figure.querySelector("svg"));
    var lifetimesFigure = section.querySelector("figure.chart.lifetimes");
    var lifetimes = lifetimesFigure && lifetimesFigure.querySelector("svg");
    var lifetimesAxis = chartAxis(lifetimes);
    var boxes = lifetimes ? Array.prototype.slice.call(lifetimes.querySelectorAll("rect[data-buffer]")) : [];
    // In a diff, the new run first.
    var panel = { section: section, fixed: 0, run: runs[runs.length - 1] };
    var title = el("p", { class: "live-title" });
    var groupsBox = el("div", { class: "live-groups-box" });
    var table = recordTable(BUFFER_COLUMNS, "live-buffers", 0, function (b) {
      return { "data-buffer": String(b.id) };
    });
    var maxEvents = Math.max.apply(null, runs.map(function (r) { return r.events; }));
    var hasPeaks = runs.some(function (r) { return r.peaks.length > 1; });
    var bar = controls(panel, maxEvents, hasPeaks);
    var runSwitch = null;
    if (runs.length > 1) {
      runSwitch = el("select", { class: "run", title: "which run's live set" }, runs.map(function (r) {
        return el("option", { value: r.run, text: r.run + " run" });
      }));
      runSwitch.addEventListener("change", function () {
        panel.run = runs[runSwitch.selectedIndex];
        panel.show(Math.min(panel.fixed, panel.run.events - 1), true);
      });
      runSwitch.selectedIndex = runs.length - 1;
      bar.bar.insertBefore(runSwitch, bar.bar.firstChild);
    }
    var box = el("div", { class: "live-panel", "data-section": id }, [
      el("h3", { text: "The live set at any point" }),
      el("p", { class: "live-help", text: "Point at the heap chart or click it, or use ←/→ and p (the peak)" +
        (hasPeaks ? ", n (the next of the distinct peaks)." : "; --peaks N lists more peaks to visit with n.") }),
      bar.bar, title, groupsBox,
      el("h4", { text: "Buffers, largest first" }),
      table.tools, table.table,
    ]);
    if (figure) figure.parentNode.insertBefore(box, figure.nextSibling);
    else section.appendChild(box);
    box.addEventListener("focusin", function () { activePanel = panel; });
    box.addEventListener("mouseenter", function () { activePanel = panel; });
    if (figure) figure.addEventListener("mouseenter", function () { activePanel = panel; });

    panel.peak = function () { return panel.run.peak; };
    panel.nextPeak = function () {
      var peaks = panel.run.peaks.slice().sort(function (a, b) { return a - b; });
      var later = peaks.filter(function (p) { return p > panel.fixed; });
      return later.length ? later[0] : peaks[0];
    };
    panel.show = function (position, fix) {
      var space = panel.run;
      position = Math.max(0, Math.min(space.events - 1, Math.round(position)));
      if (fix) {
        panel.fixed = position;
        bar.slider.value = String(position);
        activePanel = panel;
      }
      var heap = space.heapAfter[position];
      var instruction = S[space.instructions[position]];
      title.textContent = "Live after event " + position + (instruction ? " (" + instruction + ")" : "") + ": " +
        bytes(heap) + " (" + heap + " bytes)" + (position === space.peak ? " — the peak" : "");
      title.dataset.position = position;
      title.dataset.heapBytes = heap;
      var live = liveBuffers(space, position);
      var described = live.filter(function (b) { return b.described; });
      var undescribed = live.filter(function (b) { return !b.described; });
      var summaries = [];
      if (undescribed.length) {
        var rest = undescribed.reduce(function (t, b) { return t + b.size; }, 0);
        summaries.push({ bytes: rest, label: plural(undescribed.length, "buffer") + " past the page's largest, not described one by one" });
      }
      groupsBox.textContent = "";
      var bySource = groupBy(described, function (b) { return b.source === null ? data.labels.no_source : b.source; });
      bySource.forEach(function (g) { g.label = g.key === data.labels.no_source ? g.key : fileAndLine(g.key); });
      groupsBox.appendChild(groupTable("By source line", ["Bytes", "Share", "Buffers", "Source line"], bySource, heap));
      table.set(described.slice().sort(largestFirst), summaries);
      if (axis) axis.mark(position + 1);
      if (lifetimesAxis) lifetimesAxis.mark(position + 1);
      if (lifetimes) {
        var ids = {};
        described.forEach(function (b) { ids[b.id] = true; });
        lifetimes.classList.add("picking");
        boxes.forEach(function (rect) {
          rect.classList.toggle("live", ids[rect.dataset.buffer] === true);
        });
      }
    };
    followPointer(axis, panel, function (value) { return value - 1; });
    followPointer(lifetimesAxis, panel, function (value) { return value - 1; });
    // Hovering a buffer marks its lifetime and its row.
    function highlight(id, on) {
      boxes.forEach(function (rect) { if (rect.dataset.buffer === id) rect.classList.toggle("hl", on); });
      Array.prototype.forEach.call(table.table.querySelectorAll("tr[data-buffer='" + id + "']"), function (tr) {
        tr.classList.toggle("hl", on);
      });
    }
    boxes.forEach(function (rect) {
      rect.addEventListener("mouseenter", function () { highlight(rect.dataset.buffer, true); });
      rect.addEventListener("mouseleave", function () { highlight(rect.dataset.buffer, false); });
    });
    table.table.addEventListener("mouseover", function (event) {
      var tr = event.target.closest && event.target.closest("tr[data-buffer]");
      if (tr) highlight(tr.dataset.buffer, true);
    });
    table.table.addEventListener("mouseout", function (event) {
      var tr = event.target.closest && event.target.closest("tr[data-buffer]");
      if (tr) highlight(tr.dataset.buffer, false);
    });
    panel.show(runs[runs.length - 1].peak, true);
    return panel;
  }

  // ---- An allocator's live allocations at a point of time --------------------

  // As the table of allocations at the peak: one allocation's size, how many, their total.
  var ALLOCATION_COLUMNS = [
    { name: "Size", kind: "bytes", value: function (a) { return a.allocation; } },
    { name: "Requested", kind: "bytes", value: function (a) { return a.requested; } },
    { name: "Count", kind: "count", value: function (a) { return a.count; } },
    { name: "Total", kind: "bytes", value: function (a) { return a.size; } },
    { name: "Region", value: function (a) { return a.region; } },
    { name: "Data type", value: function (a) { return a.dataType; } },
    { name: "Shape", wrap: true, value: function (a) { return a.shape; } },
    { name: "Made by", wrap: true, value: function (a) { return a.opName || data.labels.no_op_recorded; } },
  ];
  function allocatorPanel(section, allocator) {
    var times = sums(allocator.time);
    var heap = sums(allocator.heap);
    var figure = section.querySelector("figure.chart.timeline");
    var axis = chartAxis(figure && figure.querySelector("svg"));
    var panel = { section: section, fixed: 0 };
    var title = el("p", { class: "live-title" });
    var table = recordTable(ALLOCATION_COLUMNS, "live-allocations", 3, function () { return {}; });
    var bar = controls(panel, times.length, false);
    var box = el("div", { class: "live-panel", "data-section": allocator.section }, [
      el("h3", { text: "What was live at any time" }),
      el("p", { class: "live-help", text: "Point at the chart or click it, or use ←/→ and p (the peak)." }),
      bar.bar, title, table.tools, table.table,
    ]);
    if (figure) figure.parentNode.insertBefore(box, figure.nextSibling);
    else section.appendChild(box);
    box.addEventListener("mouseenter", function () { activePanel = panel; });
    if (figure) figure.addEventListener("mouseenter", function () { activePanel = panel; });
    panel.peak = function () { return allocator.peak === null ? panel.fixed : allocator.peak; };
    panel.nextPeak = panel.peak;
    panel.show = function (position, fix) {
      position = Math.max(0, Math.min(times.length - 1, Math.round(position)));
      if (fix) {
        panel.fixed = position;
        bar.slider.value = String(position);
        activePanel = panel;
      }
      var merged = {};
      var rows = [];
      var attributed = 0;
      var undescribed = { count: 0, bytes: 0 };
      var v = allocator.intervals;
      for (var k = 0; k < v.length; k += 3) {
        if (!(v[k + 1] <= position && position < v[k + 2])) continue;
        var a = allocator.allocations[v[k]];
        if (typeof a === "number") {
          undescribed.count += 1;
          undescribed.bytes += a;
          attributed += a;
          continue;
        }
        attributed += a[1];
        var key = a.join(",");
        if (!merged[key]) {
          rows.push((merged[key] = {
            opName: S[a[0]], allocation: a[1], requested: a[2], region: S[a[3]], dataType: S[a[4]], shape: S[a[5]],
            count: 0, size: 0,
          }));
        }
        merged[key].count += 1;
        merged[key].size += a[1];
      }
      // Larger allocations first, as the table at the peak.
      rows.sort(function (a, b) { return b.allocation - a.allocation || b.requested - a.requested; });
      var summaries = [];
      if (undescribed.count) {
        summaries.push({ bytes: undescribed.bytes, label: plural(undescribed.count, "allocation") + " past the page's largest" });
      }
      if (heap[position] - attributed !== 0) {
        summaries.push({ bytes: heap[position] - attributed, label: data.labels.before_capture });
      }
      title.textContent = "Live after event " + position + " at " + milliseconds(times[position]) + ": heap " +
        bytes(heap[position]) + " (" + heap[position] + " bytes) in " + plural(rows.reduce(function (t, r) { return t + r.count; }, 0), "allocation") +
        (position === allocator.peak ? " — the peak" : "");
      title.dataset.position = position;
      table.set(rows, summaries);
      if (axis) axis.mark(times[position]);
    };
    followPointer(axis, panel, function (ps) {
      // The last event at or before the time under the pointer.
      var low = 0, high = times.length - 1;
      while (low < high) {
        var middle = (low + high + 1) >> 1;
        if (times[middle] <= ps) low = middle;
        else high = middle - 1;
      }
      return low;
    });
    panel.show(allocator.peak === null ? 0 : allocator.peak, true);
  }

  // ---- Flame graphs that zoom and search, as inferno's do --------------------

  function flameGraph(svg) {
    var frames = svg.querySelector("svg.frames");
    if (!frames) return;
    var width = Number(frames.getAttribute("width"));
    var total = Number(frames.getAttribute("total_samples"));
    var nodes = Array.prototype.slice.call(frames.querySelectorAll("g")).map(function (g) {
      var rect = g.querySelector("rect"), text = g.querySelector("text"), title = g.querySelector("title");
      var name = title ? title.textContent.replace(/ \([^()]*bytes, [^()]*%\)$/, "") : "";
      return {
        g: g, rect: rect, text: text, name: name, x: Number(rect.getAttribute("fg:x")), w: Number(rect.getAttribute("fg:w")),
        y: Number(rect.getAttribute("y")), fill: rect.getAttribute("fill"), rectX: rect.getAttribute("x"),
        rectWidth: rect.getAttribute("width"), textX: text.getAttribute("x"), label: text.textContent,
      };
    });
    if (!nodes.length) return;
    // Icicles (xmem's) grow downwards: a deeper frame has a larger y.
    var widest = nodes.reduce(function (a, b) { return b.w > a.w ? b : a; });
    var downwards = nodes.every(function (n) { return n.y >= widest.y || n.w === widest.w; });
    function deeper(n, than) { return downwards ? n.y > than.y : n.y < than.y; }
    function fit(n, widthPercent) {
      var chars = Math.floor((widthPercent / 100) * width / 7);
      n.text.textContent = chars < 3 ? "" : n.name.length <= chars ? n.name : n.name.slice(0, chars - 2) + "..";
    }
    var reset = el("button", { type: "button", class: "unzoom", text: "Reset zoom", disabled: "" });
    var search = el("input", { type: "search", class: "flame-search", placeholder: "search frames" });
    var matched = el("span", { class: "matched" });
    svg.parentNode.insertBefore(el("div", { class: "flame-tools" }, [reset, search, matched]), svg);
    function zoom(target) {
      nodes.forEach(function (n) {
        var inside = n.x >= target.x && n.x + n.w <= target.x + target.w;
        var around = n.x <= target.x && n.x + n.w >= target.x + target.w;
        n.g.classList.remove("hide", "parent");
        if (deeper(n, target) || n === target) {
          if (!inside) return n.g.classList.add("hide");
          var x = ((n.x - target.x) / target.w) * 100, w = (n.w / target.w) * 100;
          n.rect.setAttribute("x", x.toFixed(4) + "%");
          n.rect.setAttribute("width", w.toFixed(4) + "%");
          n.text.setAttribute("x", (x + 0.3).toFixed(4) + "%");
          fit(n, w);
        } else if (around) {
          n.g.classList.add("parent");
          n.rect.setAttribute("x", "0%");
          n.rect.setAttribute("width", "100%");
          n.text.setAttribute("x", "0.3%");
          fit(n, 100);
        } else {
          n.g.classList.add("hide");
        }
      });
      reset.disabled = false;
      svg.dataset.zoomed = target.name;
    }
    function unzoom() {
      nodes.forEach(function (n) {
        n.g.classList.remove("hide", "parent");
        n.rect.setAttribute("x", n.rectX);
        n.rect.setAttribute("width", n.rectWidth);
        n.text.setAttribute("x", n.textX);
        n.text.textContent = n.label;
      });
      reset.disabled = true;
      delete svg.dataset.zoomed;
    }
    nodes.forEach(function (n) {
      n.g.addEventListener("click", function () { zoom(n); });
    });
    reset.addEventListener("click", unzoom);
    search.addEventListener("input", function () {
      var query = search.value.trim().toLowerCase();
      var hits = [];
      nodes.forEach(function (n) {
        var hit = query !== "" && n.name.toLowerCase().indexOf(query) >= 0;
        n.rect.setAttribute("fill", hit ? "rgb(230,0,230)" : n.fill);
        n.g.classList.toggle("match", hit);
        if (hit) hits.push([n.x, n.x + n.w]);
      });
      // The share of the bytes under a matching frame, each byte counted once.
      hits.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
      var covered = 0, end = -Infinity;
      hits.forEach(function (h) {
        if (h[1] <= end) return;
        covered += h[1] - Math.max(h[0], end);
        end = h[1];
      });
      matched.textContent = query === "" ? "" : "Matched: " + percent(covered, total) + " of the bytes";
    });
  }

  // ---- Module and memory-space selector --------------------------------------

  /** The section a heading (which carries the id and the data attributes) heads. */
  function sectionOf(id) {
    var heading = document.getElementById(id);
    return heading && heading.closest("section");
  }
  function selector() {
    var headings = Array.prototype.slice.call(document.querySelectorAll("h2[data-module]"));
    if (!headings.length) return false;
    var modules = [];
    var byName = {};
    headings.forEach(function (heading) {
      var name = heading.dataset.module;
      if (!byName[name]) modules.push((byName[name] = { name: name, sections: [], peak: 0 }));
      byName[name].sections.push(heading);
      byName[name].peak = Math.max(byName[name].peak, Number(heading.dataset.peak || 0));
    });
    var notes = Array.prototype.slice.call(document.querySelectorAll("[data-notes-of]"));
    var filter = el("input", { type: "search", class: "module-filter", placeholder: "module name or id" });
    var moduleList = el("select", { class: "module", title: "modules, largest peak first" });
    var spaceList = el("select", { class: "space", title: "memory spaces of the module" });
    var every = el("input", { type: "checkbox", class: "every-module" });
    var nav = el("nav", { class: "explorer" }, [
      el("label", { text: "Module " }, [filter, moduleList]),
      el("label", { text: " Memory space " }, [spaceList]),
      el("label", { class: "every", text: " every module " }, [every]),
    ]);
    var heading = document.querySelector("h1");
    heading.parentNode.insertBefore(nav, heading.nextSibling);
    function fillModules() {
      var query = filter.value.trim().toLowerCase();
      var current = moduleList.value;
      moduleList.textContent = "";
      modules.forEach(function (m) {
        if (query && m.name.toLowerCase().indexOf(query) < 0) return;
        moduleList.appendChild(el("option", { value: m.name, text: m.name + " · " + bytes(m.peak) }));
      });
      if (current && byName[current] && moduleList.querySelector("option[value='" + CSS.escape(current) + "']")) moduleList.value = current;
    }
    function fillSpaces() {
      var module = byName[moduleList.value];
      spaceList.textContent = "";
      (module ? module.sections : []).forEach(function (heading) {
        spaceList.appendChild(el("option", { value: heading.id, text: heading.dataset.space || "(not analysed)" }));
      });
    }
    function showSelected() {
      headings.forEach(function (heading) {
        var hidden = !every.checked && heading.id !== spaceList.value;
        heading.closest("section").hidden = hidden;
        if (hidden) return;
        livePanel(heading.id);
        if (panels[heading.id]) activePanel = panels[heading.id];
      });
      notes.forEach(function (note) {
        note.hidden = !every.checked && note.dataset.notesOf !== moduleList.value;
      });
      document.documentElement.dataset.selected = spaceList.value;
    }
    function select(sectionId) {
      var heading = sectionId && document.getElementById(sectionId);
      if (!heading || !heading.dataset.module) return false;
      filter.value = "";
      fillModules();
      moduleList.value = heading.dataset.module;
      fillSpaces();
      spaceList.value = sectionId;
      showSelected();
      return true;
    }
    filter.addEventListener("input", function () {
      fillModules();
      fillSpaces();
      showSelected();
    });
    moduleList.addEventListener("change", function () {
      fillSpaces();
      showSelected();
    });
    spaceList.addEventListener("change", showSelected);
    every.addEventListener("change", showSelected);
    window.addEventListener("hashchange", function () {
      var id = decodeURIComponent(location.hash.slice(1));
      if (select(id)) document.getElementById(id).scrollIntoView();
    });
    fillModules();
    if (!select(decodeURIComponent(location.hash.slice(1)))) select(modules[0].sections[0].id);
    return true;
  }

  // ---- Start -----------------------------------------------------------------

  enhanceStaticTables();
  var runsBySection = {};
  var order = [];
  data.spaces.forEach(function (space) {
    if (!runsBySection[space.section]) order.push(space.section);
    (runsBySection[space.section] = runsBySection[space.section] || []).push(space);
  });
  /** A section's live-set panel, made when the section is first shown: a page may have thousands. */
  var panels = {};
  function livePanel(id) {
    if (panels[id] !== undefined || !runsBySection[id]) return;
    var section = sectionOf(id);
    panels[id] = section ? spacePanel(section, id, runsBySection[id]) : null;
  }
  data.allocators.forEach(function (allocator) {
    var section = sectionOf(allocator.section);
    if (section) allocatorPanel(section, allocator);
  });
  Array.prototype.forEach.call(document.querySelectorAll("svg.flame"), flameGraph);
  // A report shows the selected module's sections; a diff all of its own.
  if (!selector()) order.forEach(livePanel);
  document.documentElement.dataset.xmemReady = String(Math.round(performance.now()));
})();
