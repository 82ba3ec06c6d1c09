// The report page's inline script, as plain browser JavaScript in a string (the page has no build step and
// no network). It reads the JSON payload from #lens-data, decodes base64 float32 slices, and draws one
// layer/head/kind heatmap on a canvas with a token strip and a hover readout. Kept ES2017, no backticks.
export const REPORT_SCRIPT = String.raw`
(function () {
  'use strict';
  var payload = JSON.parse(document.getElementById('lens-data').textContent);
  var meta = payload.meta, n = meta.n, H = meta.heads, cache = {};
  function tensor(layer, kind) {
    var key = layer + '/' + kind;
    if (!cache[key]) {
      var bin = atob(payload.data[key]), bytes = new Uint8Array(bin.length);
      for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      cache[key] = new Float32Array(bytes.buffer);
    }
    return cache[key];
  }
  function value(layer, head, kind, i, j) { return tensor(layer, kind)[(head * n + i) * n + j]; }
  var $ = function (id) { return document.getElementById(id); };
  var layerSel = $('layer'), headSel = $('head'), kindSel = $('kind'), canvas = $('heat'), strip = $('strip'), readout = $('readout');
  function option(sel, v, label) { var o = document.createElement('option'); o.value = String(v); o.textContent = label; sel.appendChild(o); }
  meta.layers.forEach(function (l) { option(layerSel, l, 'layer ' + l); });
  for (var h = 0; h < H; h++) option(headSel, h, 'head ' + h);
  meta.kinds.forEach(function (k) { option(kindSel, k, k); });
  layerSel.value = String(meta.initial.layer); headSel.value = String(meta.initial.head); kindSel.value = meta.initial.kind;
  var spans = meta.tokens.map(function (t, i) {
    var s = document.createElement('span');
    s.className = 'tok' + (t.special ? ' special' : '');
    s.textContent = t.text;
    s.title = i + ': ' + t.text + (t.special ? ' (special)' : ' [' + t.start + ',' + t.end + ')');
    s.tabIndex = 0;
    s.addEventListener('mouseenter', function () { showRow(i); });
    s.addEventListener('focus', function () { showRow(i); });
    strip.appendChild(s);
    return s;
  });
  function cur() { return { layer: Number(layerSel.value), head: Number(headSel.value), kind: kindSel.value }; }
  var cell = 1;
  function color(v, lim, diverging) {
    var t = lim > 0 ? Math.max(-1, Math.min(1, v / lim)) : 0;
    if (!diverging) { var a = Math.max(0, t); return 'rgb(' + Math.round(255 - 215 * a) + ',' + Math.round(255 - 155 * a) + ',' + Math.round(255 - 30 * a) + ')'; }
    if (t >= 0) return 'rgb(255,' + Math.round(255 - 200 * t) + ',' + Math.round(255 - 200 * t) + ')';
    return 'rgb(' + Math.round(255 + 200 * t) + ',' + Math.round(255 + 200 * t) + ',255)';
  }
  function draw() {
    var c = cur(), m = tensor(c.layer, c.kind), off = c.head * n * n, lim = 0, diverging = c.kind !== 'probs';
    for (var k = 0; k < n * n; k++) lim = Math.max(lim, Math.abs(m[off + k]));
    cell = Math.max(1, Math.floor(Math.min(640, 12 * n) / n));
    canvas.width = canvas.height = cell * n;
    var ctx = canvas.getContext('2d');
    for (var i = 0; i < n; i++) for (var j = 0; j < n; j++) { ctx.fillStyle = color(m[off + i * n + j], lim, diverging); ctx.fillRect(j * cell, i * cell, cell, cell); }
    $('legend').textContent = c.kind + (diverging ? ' (raw, unscaled; blue < 0 < red, |max| = ' : ' (max = ') + lim.toPrecision(4) + '), scale = ' + meta.scale.toPrecision(6);
  }
  function fmt(v) { return v.toPrecision(5); }
  function showCell(i, j) {
    var c = cur(), parts = [];
    meta.kinds.forEach(function (k) { parts.push(k + ' = ' + fmt(value(c.layer, c.head, k, i, j))); });
    readout.textContent = 'query ' + i + ' "' + meta.tokens[i].text + '" \u2192 key ' + j + ' "' + meta.tokens[j].text + '" (\u03b4 = ' + (i - j) + '): ' + parts.join(', ');
  }
  function showRow(i) {
    var c = cur(), kind = meta.kinds.indexOf('probs') >= 0 ? 'probs' : c.kind, max = 0, j;
    for (j = 0; j < n; j++) max = Math.max(max, Math.abs(value(c.layer, c.head, kind, i, j)));
    for (j = 0; j < n; j++) {
      spans[j].style.background = color(value(c.layer, c.head, kind, i, j), max, kind !== 'probs');
      spans[j].classList.toggle('query', j === i);
    }
    readout.textContent = 'query ' + i + ' "' + meta.tokens[i].text + '": strip shaded by ' + kind + ' of layer ' + c.layer + ', head ' + c.head;
  }
  canvas.addEventListener('mousemove', function (e) {
    var r = canvas.getBoundingClientRect();
    var j = Math.floor((e.clientX - r.left) * canvas.width / r.width / cell), i = Math.floor((e.clientY - r.top) * canvas.height / r.height / cell);
    if (i >= 0 && i < n && j >= 0 && j < n) showCell(i, j);
  });
  [layerSel, headSel, kindSel].forEach(function (s) { s.addEventListener('change', draw); });
  draw();
})();
`;
