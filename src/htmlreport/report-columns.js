  // A page drawn per pixel column: D holds an entry per column (its peak
  // call's numbers; D.call the peak call, D.from the column's first call,
  // D.fired how many of its calls fired a tier) and D.n counts the calls.
  // These declarations replace those above of the same name.
  function slotOf(k) {
    var lo = 0, hi = D.from.length - 1;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (D.from[mid] <= k) { lo = mid; } else { hi = mid - 1; }
    }
    return lo;
  }
  function lastOf(i) { return i + 1 < D.from.length ? D.from[i + 1] - 1 : D.n; }
  function span(i) {
    var a = D.from[i], b = lastOf(i);
    return a === b ? "call " + fmt(a) :
      "calls " + fmt(a) + "–" + fmt(b) + " (tiers fired at " + fmt(D.fired[i]) + " of " + fmt(b - a + 1) + "), the peak at call " + fmt(D.call[i]);
  }
  function xOf(k) { return LEFT + slotOf(k); }
  function line(k) { var i = slotOf(k); return described(span(i), i); }
  function callAt(svg, ev) {
    var pt = svg.createSVGPoint();
    pt.x = ev.clientX; pt.y = ev.clientY;
    var p = pt.matrixTransform(svg.getScreenCTM().inverse());
    var i = Math.max(0, Math.min(D.from.length - 1, Math.round(p.x - LEFT)));
    return D.call[i];
  }
  function pick(k) {
    k = Math.max(1, Math.min(D.n, parseInt(k, 10) || D.n));
    var i = slotOf(k);
    composed(k, i, span(i) + " · ");
  }
