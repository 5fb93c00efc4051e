// compactor report: hover a call for its report line, pick a call for its composition.
// Reads the per-call arrays embedded in #calls; makes no request.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("calls").textContent);
  var N = D.after.length;
  if (!N) { return; }
  var LEFT = 72, RIGHT = 1110;
  function fmt(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  function xOf(k) { return N <= 1 ? LEFT : LEFT + Math.round((k - 1) * (RIGHT - LEFT) / (N - 1)); }
  function line(k) { return described("call " + k, k - 1); }
  // The report line of entry i of D, after its head (which call or calls).
  function described(head, i) {
    return head + " · turn " + D.turn[i] + " · " + fmt(D.before[i]) + " → " + fmt(D.after[i]) +
      (D.rec[i] >= 0 ? " · recorded " + fmt(D.rec[i]) : "") +
      " · raw " + fmt(D.raw[i]) + "\n" +
      "tiers " + (D.tiers[i] || "-") + " · shrunk " + D.shrunk[i] + " · dropped " + D.dropped[i] +
      " · folded " + D.folded[i] + " · status " + D.status[i] + "\n" +
      "cache read " + fmt(D.cr[i]) + " · write " + fmt(D.cw[i]) + " · view " + D.hash[i];
  }
  function callAt(svg, ev) {
    var ctm = svg.getScreenCTM();
    if (!ctm) { return N; }
    var p = new DOMPoint(ev.clientX, ev.clientY).matrixTransform(ctm.inverse());
    var k = N <= 1 ? 1 : Math.round((p.x - LEFT) * (N - 1) / (RIGHT - LEFT)) + 1;
    return Math.max(1, Math.min(N, k));
  }
  function hover(svgId, guideId, tipId, lineId) {
    var svg = document.getElementById(svgId);
    var hit = document.getElementById(svgId + "-hit");
    var guide = document.getElementById(guideId);
    var tip = tipId && document.getElementById(tipId);
    var out = lineId && document.getElementById(lineId);
    if (!(svg instanceof SVGSVGElement) || !hit || !guide) { return; }
    hit.addEventListener("mousemove", function (ev) {
      var k = callAt(svg, ev);
      var x = xOf(k);
      guide.setAttribute("x1", x); guide.setAttribute("x2", x);
      if (out) { out.textContent = line(k); }
      if (tip) {
        tip.textContent = line(k);
        tip.hidden = false;
        var box = svg.parentNode.getBoundingClientRect();
        var left = ev.clientX - box.left + 14;
        if (left + tip.offsetWidth > box.width) { left = ev.clientX - box.left - tip.offsetWidth - 14; }
        tip.style.left = Math.max(0, left) + "px";
        tip.style.top = Math.max(0, ev.clientY - box.top - tip.offsetHeight - 10) + "px";
      }
    });
    hit.addEventListener("mouseleave", function () {
      guide.setAttribute("x1", -10); guide.setAttribute("x2", -10);
      if (tip) { tip.hidden = true; }
    });
    hit.addEventListener("click", function (ev) { pick(callAt(svg, ev)); });
  }
  var range = document.getElementById("call-range");
  var num = document.getElementById("call");
  var bar = document.getElementById("bar");
  var table = document.getElementById("segs");
  var title = document.getElementById("comp-title");
  function pct(v, t) { if (!t) { return "–"; } var x = Math.round(v * 1000 / t); return Math.floor(x / 10) + "." + (x % 10) + "%"; }
  function pick(k) {
    k = Math.max(1, Math.min(N, parseInt(k, 10) || N));
    composed(k, k - 1, "");
  }
  // Call k picked: entry i of D in the composition panel, its title after head.
  function composed(k, i, head) {
    range.value = k; num.value = k;
    var c = D.comp[i], total = 0, j;
    for (j = 0; j < c.length; j++) { total += c[j]; }
    var segs = bar.children, rows = table.tBodies[0].rows;
    for (j = 0; j < c.length; j++) {
      segs[j].style.flexGrow = c[j];
      segs[j].title = D.segs[j] + ": " + fmt(c[j]) + " tokens";
      rows[j].cells[1].textContent = fmt(c[j]);
      rows[j].cells[2].textContent = pct(c[j], total);
      rows[j].className = c[j] ? "" : "zero";
    }
    document.getElementById("segs-total").textContent = fmt(total);
    document.getElementById("segs-predicted").textContent = fmt(D.after[i]);
    title.textContent = head + "turn " + D.turn[i] + " · " + fmt(D.after[i]) + " tokens after compaction" +
      (D.tiers[i] ? " · " + D.tiers[i].split(",").join(", ") : "");
  }
  range.addEventListener("input", function () { pick(range.value); });
  num.addEventListener("change", function () { pick(num.value); });
  hover("ctx", "ctx-guide", "ctx-tip", "ctx-line");
  hover("cache-chart", "cache-chart-guide", null, null);
})();
