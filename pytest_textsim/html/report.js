(function () {
  "use strict";
  // The page's data: built by pytest_textsim/html/model.py. Every text in it is
  // untrusted (responses, test ids, judge reasons): it reaches the page only
  // through esc() or textContent.
  var D = JSON.parse(document.getElementById("textsim-data").textContent);
  var S = D.strings, M = D.metrics, R = D.rows, DETAILS = D.details, KINDS = D.kinds;
  var TEST = 0, METRIC = 1, SCORE = 2, THRESHOLD = 3, VERDICT = 4, OUTCOME = 5, DETAIL = 6,
    DELTA = 7, CHANGE = 8, FLAKY = 9;
  var PAGE = 200;
  var ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  // Bidirectional controls (formatting.py's _BIDI) are shown as their escapes, not
  // obeyed: a text drawn with its highlights is sliced first, so offsets stay whole.
  var BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
  function visible(c) { return "\\u" + ("000" + c.charCodeAt(0).toString(16)).slice(-4); }
  function esc(text) {
    return String(text).replace(/[&<>"']/g, function (c) { return ESC[c]; }).replace(BIDI, visible);
  }
  function fmt(x) { return x === null || x === undefined ? "" : (Math.round(x * 1000) / 1000).toFixed(3); }
  // Verdict codes (model.py's VERDICTS): 1 pass, 0 fail (its test failed), 2 below and
  // 3 above (missed the threshold in a test that did not fail), 4 xfail (missed it in a
  // test expected to fail), null no threshold.
  var BELOW = 2, ABOVE = 3, XFAIL = 4;
  function verdictHtml(v) {
    return v === 1 ? '<span class="badge pass">pass</span>'
      : v === 0 ? '<span class="badge fail">fail</span>'
      : v === BELOW ? '<span class="badge below" title="missed its threshold; the test did not fail">below</span>'
      : v === ABOVE ? '<span class="badge below" title="missed its threshold; the test did not fail">above</span>'
      : v === XFAIL ? '<span class="badge below" title="missed its threshold; the test is expected to fail (xfail)">xfail</span>'
      : '<span class="badge none">-</span>';
  }
  var lowered = null, ranks = null;
  function testRanks() {
    if (ranks === null) {
      var order = S.map(function (_, i) { return i; });
      order.sort(function (a, b) { return S[a] < S[b] ? -1 : S[a] > S[b] ? 1 : 0; });
      ranks = new Int32Array(S.length);
      for (var k = 0; k < order.length; k++) ranks[order[k]] = k;
    }
    return ranks;
  }
  var metricRanks = (function () {
    var order = M.map(function (_, i) { return i; });
    order.sort(function (a, b) { return M[a] < M[b] ? -1 : M[a] > M[b] ? 1 : 0; });
    var r = new Int32Array(M.length);
    for (var k = 0; k < order.length; k++) r[order[k]] = k;
    return r;
  })();

  var state = { sort: null, dir: 1, page: 0, view: [] };
  var tbody = document.getElementById("rows");
  var fMetric = document.getElementById("f-metric");
  var fVerdict = document.getElementById("f-verdict");
  var fText = document.getElementById("f-text");

  M.forEach(function (name, i) {
    var option = document.createElement("option");
    option.value = String(i);
    option.textContent = name;
    fMetric.appendChild(option);
  });

  function keyOf(column) {
    var rank = column === TEST ? testRanks() : null;
    return function (row) {
      var v;
      if (column === TEST) v = rank[row[TEST]];
      else if (column === METRIC) v = metricRanks[row[METRIC]];
      else if (column === OUTCOME) v = S[row[OUTCOME]];
      else v = row[column];
      return v === null || v === undefined ? null : v;
    };
  }

  function apply() {
    var t0 = performance.now();
    var metric = fMetric.value === "" ? -1 : Number(fMetric.value);
    var verdict = fVerdict.value;
    var text = fText.value.trim().toLowerCase();
    if (text && lowered === null) lowered = S.map(function (s) { return s.toLowerCase(); });
    var view = [];
    for (var i = 0; i < R.length; i++) {
      var row = R[i];
      if (metric >= 0 && row[METRIC] !== metric) continue;
      if (verdict === "pass" && row[VERDICT] !== 1) continue;
      if (verdict === "fail" && row[VERDICT] !== 0) continue;
      if (verdict === "below" && row[VERDICT] !== BELOW && row[VERDICT] !== ABOVE && row[VERDICT] !== XFAIL) continue;
      if (verdict === "none" && row[VERDICT] !== null) continue;
      if (verdict === "regression" && S[row[CHANGE]] !== "regression") continue;
      if (verdict === "flaky" && !row[FLAKY]) continue;
      if (text && lowered[row[TEST]].indexOf(text) < 0) continue;
      view.push(i);
    }
    if (state.sort !== null) {
      var key = keyOf(state.sort), dir = state.dir;
      var keys = new Array(R.length);
      for (var j = 0; j < view.length; j++) keys[view[j]] = key(R[view[j]]);
      view.sort(function (a, b) {
        var x = keys[a], y = keys[b];
        if (x === y) return a - b;
        if (x === null) return 1;  // no value last, either direction
        if (y === null) return -1;
        return (x < y ? -1 : 1) * dir;
      });
    }
    state.view = view;
    var pages = Math.max(1, Math.ceil(view.length / PAGE));
    if (state.page >= pages) state.page = pages - 1;
    render();
    var ms = performance.now() - t0;
    document.body.setAttribute("data-apply-ms", ms.toFixed(1));
  }

  function render() {
    var start = state.page * PAGE, end = Math.min(start + PAGE, state.view.length);
    var html = [];
    for (var k = start; k < end; k++) {
      var i = state.view[k], row = R[i];
      var delta = row[DELTA];
      var deltaHtml = delta === null || delta === undefined ? "" :
        '<span class="delta ' + (delta < 0 ? "down" : delta > 0 ? "up" : "") + '">' +
        (delta > 0 ? "+" : "") + fmt(delta) + "</span>";
      html.push(
        '<tr class="row' + (row[VERDICT] === 0 ? " failing" : "") +
        (row[VERDICT] === BELOW || row[VERDICT] === ABOVE || row[VERDICT] === XFAIL ? " below" : "") + '" data-i="' + i + '">' +
        '<td class="tid">' + esc(S[row[TEST]]) + "</td><td>" + esc(M[row[METRIC]]) + "</td>" +
        '<td class="num">' + fmt(row[SCORE]) + '</td><td class="num">' + fmt(row[THRESHOLD]) +
        "</td><td>" + verdictHtml(row[VERDICT]) + "</td><td>" + esc(S[row[OUTCOME]]) +
        (row[FLAKY] ? ' <span class="badge none">flaky</span>' : "") +
        '</td><td class="num">' + deltaHtml + "</td></tr>");
    }
    tbody.innerHTML = html.join("");
    var count = document.getElementById("count");
    count.textContent = state.view.length === 0 ? "no score matches" :
      "scores " + (start + 1) + "-" + end + " of " + state.view.length +
      (state.view.length !== R.length ? " (" + R.length + " in all)" : "");
    document.getElementById("prev").disabled = state.page === 0;
    document.getElementById("next").disabled = end >= state.view.length;
  }

  function highlighted(text, spans) {
    if (!spans || !spans.length) return esc(text);
    var sorted = spans.slice().sort(function (a, b) { return a[0] - b[0]; });
    var out = [], pos = 0;
    for (var k = 0; k < sorted.length; k++) {
      var s = sorted[k][0], e = sorted[k][1], kind = KINDS[sorted[k][2]];
      if (s < pos || e > text.length || e <= s) continue;
      out.push(esc(text.slice(pos, s)));
      out.push('<mark class="k-' + kind + '" title="' + kind + '">' + esc(text.slice(s, e)) + "</mark>");
      pos = e;
    }
    out.push(esc(text.slice(pos)));
    return out.join("");
  }

  // A RAG score (model.py's rag_detail): each side's text with its claims marked by
  // verdict, the claims listed, and the chunks in retrieval order beside them, each
  // chunk a claim rests on highlighted. Every text goes through esc().
  function claimMarks(text, spans, byNumber) {
    var out = [], pos = 0;
    for (var k = 0; k < spans.length; k++) {
      var s = spans[k][0], e = spans[k][1], c = byNumber[spans[k][2]];
      if (!c || s < pos || e > text.length || e <= s) continue;
      out.push(esc(text.slice(pos, s)));
      out.push('<mark class="claim-mark v-' + esc(c.tone) + '" data-claim="' + c.n +
        '" title="claim ' + (c.n + 1) + ": " + esc(c.verdict) + '">' + esc(text.slice(s, e)) + "</mark>");
      pos = e;
    }
    out.push(esc(text.slice(pos)));
    return out.join("");
  }
  var SIDE_NAMES = { response: "response", ground_truth: "ground truth" };
  var REASON_BY = { judge: "judge reason", check: "why" };
  function ragHtml(rag) {
    var parts = ['<div class="rag">'];
    rag.sides.forEach(function (side) {
      var byNumber = {};
      side.claims.forEach(function (c) { byNumber[c.n] = c; });
      parts.push('<div class="side rag-side"><h4>' + esc(SIDE_NAMES[side.name] || side.name) +
        ', claims marked</h4><pre class="text">' + claimMarks(S[side.text], side.spans, byNumber) +
        '</pre><ol class="claims">' + side.claims.map(function (c) {
          return '<li class="claim v-' + esc(c.tone) + '" data-claim="' + c.n + '" value="' + (c.n + 1) + '">' +
            '<span class="verdict">' + esc(c.verdict) + "</span> " + esc(c.claim) +
            (c.chunk !== undefined ? ' <span class="cites">context[' + c.chunk + "]</span>" : "") +
            (c.reason ? ' <span class="note">' + esc(c.reason) + "</span>" : "") + "</li>";
        }).join("") + "</ol></div>");
    });
    if (rag.chunks.length) {
      parts.push('<div class="side rag-chunks"><h4>chunks in retrieval order</h4><ol class="chunks">' +
        rag.chunks.map(function (chunk, k) {
          var cited = chunk.cited.map(function (c) {
            return (c[1] === "support" ? "supports" : c[1] === "against" ? "contradicts" : "cited by") +
              " claim " + (c[0] + 1);
          });
          return '<li class="chunk' + (chunk.mark ? " cited-" + esc(chunk.mark) : "") + '" data-chunk="' + k + '">' +
            '<span class="clabel">context[' + k + "]" + (chunk.label ? " " + esc(chunk.label) : "") + "</span>" +
            (chunk.verdict ? ' <span class="verdict v-' + esc(chunk.tone) + '">' + esc(chunk.verdict) + "</span>" : "") +
            (cited.length ? ' <span class="citedby">' + esc(cited.join(", ")) + "</span>" : "") +
            '<pre class="text">' + esc(S[chunk.text]) + "</pre></li>";
        }).join("") + "</ol></div>");
    }
    parts.push("</div>");
    return parts.join("");
  }

  // An agent score (agent.py's agent_detail): the trajectory it judged, numbered, each
  // step with the verdict the judge gave it (none where it gave none), the verdicts
  // that match no step of the kept trajectory, and the requirements or plan items.
  function verdictSpan(v) {
    return '<span class="verdict v-' + esc(v.tone) + '">' + esc(v.verdict) + "</span>" +
      (v.reason ? ' <span class="note">' + esc(v.reason) + "</span>" : "");
  }
  function agentHtml(agent) {
    var parts = ['<div class="agent">'];
    if (agent.steps.length) {
      parts.push('<div class="side"><h4>trajectory</h4><ol class="steps">' + agent.steps.map(function (s) {
        return '<li class="step' + (s.verdict !== undefined ? " v-" + esc(s.tone) : "") + '" data-step="' + s.n +
          '" value="' + s.n + '"><span class="skind">' + esc(s.kind) + "</span>" +
          (s.call !== undefined ? ' <span class="cites">call ' + s.call + "</span>" : "") +
          (s.name ? ' <code class="sname">' + esc(s.name) + "</code>" : "") +
          (s.arguments !== undefined ? '<code class="sargs">(' + esc(s.arguments) + ")</code>" : "") +
          (s.verdict !== undefined ? " " + verdictSpan(s) : "") +
          (s.lines.length ? '<pre class="text">' + esc(s.lines.join("\n")) + "</pre>" : "") + "</li>";
      }).join("") + "</ol></div>");
    }
    if (agent.loose.length) {
      parts.push('<div class="side"><h4>' + (agent.steps.length ? "verdicts on no step shown" : "verdicts") +
        '</h4><ul class="loose">' + agent.loose.map(function (v) {
          return '<li class="claim v-' + esc(v.tone) + '"><span class="cites">' + esc(v.label) + "</span> " + verdictSpan(v) + "</li>";
        }).join("") + "</ul></div>");
    }
    agent.lists.forEach(function (list) {
      parts.push('<div class="side"><h4>' + esc(list.title) + '</h4><ol class="judged">' + list.rows.map(function (v) {
        return '<li class="claim v-' + esc(v.tone) + '"><span class="verdict v-' + esc(v.tone) + '">' + esc(v.verdict) +
          "</span> " + esc(v.text) + (v.reason ? ' <span class="note">' + esc(v.reason) + "</span>" : "") + "</li>";
      }).join("") + "</ol></div>");
    });
    parts.push("</div>");
    return parts.join("");
  }

  function detailHtml(i) {
    var row = R[i], d = row[DETAIL] >= 0 ? DETAILS[row[DETAIL]] : {};
    var parts = ['<div class="detail-box" data-detail="' + i + '">'];
    parts.push('<div class="dhead">' + esc(M[row[METRIC]]) + " " + fmt(row[SCORE]) +
      (row[THRESHOLD] !== null ? " (threshold " + fmt(row[THRESHOLD]) + ")" : "") + " " +
      verdictHtml(row[VERDICT]) + ' <span class="tid">' + esc(S[row[TEST]]) + "</span></div>");
    if (d.lines && d.lines.length) {
      parts.push('<ul class="why">' + d.lines.map(function (l) { return "<li>" + esc(l) + "</li>"; }).join("") + "</ul>");
    }
    var texts = {};
    if (d.texts) Object.keys(d.texts).forEach(function (name) { texts[name] = S[d.texts[name]]; });
    if (d.rag) {
      // The claims show their texts, the chunks the context; the other texts as they are.
      parts.push(ragHtml(d.rag));
      d.rag.sides.forEach(function (side) { delete texts[side.name]; });
      Object.keys(texts).forEach(function (name) {
        if (d.rag.chunks.length && name.indexOf("context[") === 0) delete texts[name];
      });
      ["response", "ground_truth"].forEach(function (name) {
        if (!(name in texts)) return;
        parts.push('<div class="side"><h4>' + SIDE_NAMES[name] + '</h4><pre class="text">' + esc(texts[name]) + "</pre></div>");
        delete texts[name];
      });
    } else if ("response" in texts || "ground_truth" in texts) {
      // A side for each text the score has: a check (no_pii, regex) takes no ground truth.
      var hl = d.hl || {};
      parts.push('<div class="sides">' + [["response", "resp"], ["ground_truth", "truth"]].map(function (side) {
        if (!(side[0] in texts)) return "";
        return '<div class="side"><h4>' + SIDE_NAMES[side[0]] + '</h4><pre class="text ' + side[1] + '">' +
          highlighted(texts[side[0]], hl[side[0]]) + "</pre></div>";
      }).join("") + "</div>");
      if (d.hl) {
        parts.push('<p class="legend">' + KINDS.map(function (k) {
          return '<mark class="k-' + k + '">' + k + "</mark>";
        }).join("") + "</p>");
      } else if (d.unexplained) {
        parts.push('<p class="note">no explanation embedded for this score</p>');
      }
    }
    Object.keys(texts).forEach(function (name) {
      if (name !== "response" && name !== "ground_truth") {
        parts.push('<div class="side"><h4>' + esc(name) + '</h4><pre class="text">' + esc(texts[name]) + "</pre></div>");
      }
    });
    if (d.agent) parts.push(agentHtml(d.agent));
    if (!d.rag && !d.agent && !("response" in texts) && !d.reason) {
      parts.push('<p class="note">texts not in this report (pytest --textsim-json-texts or --textsim-html keep them)</p>');
    }
    // Whose reason it is, by the metric's catalog entry: the judge's, or a check's finding.
    if (d.reason) {
      parts.push("<h4>" + (REASON_BY[d.reason_by] || "reason") + '</h4><div class="reason">' + esc(d.reason) + "</div>");
    }
    var facts = [];
    if (d.params !== undefined) {
      var params = JSON.parse(S[d.params]);
      Object.keys(params).forEach(function (k) { facts.push([k, JSON.stringify(params[k])]); });
    }
    if (d.samples) facts.push(["samples", JSON.stringify(d.samples)]);
    if (d.baseline) {
      facts.push(["baseline", fmt(d.baseline[0]) + " -> " + fmt(row[SCORE]) + " (" + S[row[CHANGE]] +
        (d.baseline[1] !== null ? ", tolerance " + fmt(d.baseline[1]) : "") + ")" +
        (d.baseline[2] ? ": " + d.baseline[2] : "")]);
    }
    if (d.run !== undefined) facts.push(["run", String(d.run)]);
    facts.push(["test outcome", S[row[OUTCOME]] || "-"]);
    parts.push('<table class="params">' + facts.map(function (f) {
      return "<tr><td>" + esc(f[0]) + "</td><td>" + esc(f[1]) + "</td></tr>";
    }).join("") + "</table></div>");
    return parts.join("");
  }

  tbody.addEventListener("click", function (event) {
    var tr = event.target.closest("tr.row");
    if (!tr) return;
    var next = tr.nextElementSibling;
    if (next && next.classList.contains("detail")) {
      next.remove();
      tr.classList.remove("open");
      return;
    }
    var detail = document.createElement("tr");
    detail.className = "detail";
    detail.innerHTML = '<td colspan="7">' + detailHtml(Number(tr.getAttribute("data-i"))) + "</td>";
    tr.after(detail);
    tr.classList.add("open");
  });

  document.querySelectorAll("th[data-col]").forEach(function (th) {
    th.addEventListener("click", function () {
      var column = Number(th.getAttribute("data-col"));
      state.dir = state.sort === column ? -state.dir : 1;
      state.sort = column;
      document.querySelectorAll("th[data-col]").forEach(function (other) { other.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", state.dir === 1 ? "ascending" : "descending");
      state.page = 0;
      apply();
    });
  });
  [fMetric, fVerdict].forEach(function (el) { el.addEventListener("change", function () { state.page = 0; apply(); }); });
  fText.addEventListener("input", function () { state.page = 0; apply(); });
  document.getElementById("prev").addEventListener("click", function () { state.page--; render(); });
  document.getElementById("next").addEventListener("click", function () { state.page++; render(); });

  // The failing scores' details, shown without a click (the first ones).
  var failing = document.getElementById("failing-details");
  if (failing) {
    var shown = 0, total = 0, html = [];
    for (var i = 0; i < R.length; i++) {
      if (R[i][VERDICT] !== 0) continue;
      total++;
      if (shown < 25) { html.push(detailHtml(i)); shown++; }
    }
    failing.innerHTML = html.join("");
    var said = total === 0 ? "No score failed." :
      shown < total ? "The first " + shown + " of " + total + " failing scores; filter the table by verdict for the others."
        : total + (total === 1 ? " failing score." : " failing scores.");
    if (D.unasserted) {
      said += " " + (D.unasserted === 1 ? "1 score missed its threshold in a test that did not fail"
        : D.unasserted + " scores missed their threshold in tests that did not fail") +
        " (verdict below in the table).";
    }
    document.getElementById("failing-count").textContent = said;
  }
  apply();
  document.body.setAttribute("data-ready", "1");
})();
