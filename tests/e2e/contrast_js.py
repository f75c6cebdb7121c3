"""In-page JavaScript that measures the WCAG contrast of every drawn text in the plugin's frame (tests only)."""

# Each visible element that holds text of its own (an HTML element with a non-blank text node, or an SVG <text>),
# its text colour (`color`, or `fill` for SVG) against the background it is drawn on: the nearest ancestor with an
# opaque background colour (for SVG text, the <rect> drawn first in its <g>: a node's or a badge's fill), blended
# over what lies under it when translucent. Disabled controls are exempt (WCAG 1.4.3 "inactive"). Answers the
# failures: [{text, ratio, need, fg, bg, where}].
CONTRAST_JS = r"""
(selector) => {
  const parse = (c) => {
    const m = /rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)/.exec(c || '');
    return m ? [+m[1], +m[2], +m[3], m[4] === undefined ? 1 : +m[4]] : null;
  };
  const over = (top, under) => {
    const a = top[3];
    return [0, 1, 2].map((i) => top[i] * a + under[i] * (1 - a)).concat(1);
  };
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const layers = (el) => {  // backgrounds from el outwards until an opaque one
    const out = [];
    for (let e = el; e && e.nodeType === 1; e = e.parentElement || e.parentNode) {
      if (e instanceof SVGElement && e.tagName !== 'svg') {
        const g = e.tagName === 'g' ? e : null;
        const rect = g && [...g.children].find((k) => k.tagName === 'rect');
        if (rect) {
          const st = getComputedStyle(rect);
          const fill = parse(st.fill);
          if (fill && st.fill !== 'none') {
            const op = parseFloat(st.fillOpacity || '1') * parseFloat(st.opacity || '1');
            out.push([fill[0], fill[1], fill[2], fill[3] * op]);
          }
        }
      } else {
        const bg = parse(getComputedStyle(e).backgroundColor);
        if (bg && bg[3] > 0) out.push(bg);
      }
      if (out.length && out[out.length - 1][3] >= 0.999) break;
    }
    let bg = [255, 255, 255, 1];
    for (const c of out.reverse()) bg = over(c, bg);
    return bg;
  };
  const root = selector ? document.querySelector(selector) : document.body;
  const fails = [];
  const seen = new Set();
  for (const el of root.querySelectorAll('*')) {
    const isSvgText = el.tagName === 'text' || el.tagName === 'tspan';
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own) continue;
    if (el.closest('[hidden], script, style, title, option, datalist')) continue;
    if (el.closest('button:disabled, input:disabled, select:disabled, [aria-disabled=true]')) continue;
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) continue;
    const st = getComputedStyle(el);
    if (st.visibility === 'hidden' || parseFloat(st.opacity) === 0) continue;
    const fg = parse(isSvgText ? st.fill : st.color);
    if (!fg) continue;
    const bg = layers(el);
    const size = parseFloat(st.fontSize);
    const bold = parseInt(st.fontWeight, 10) >= 700;
    const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    const got = ratio(over(fg, bg), bg);
    const text = el.textContent.trim().slice(0, 40);
    const key = el.className && el.className.baseVal !== undefined ? el.className.baseVal : el.className;
    if (got + 1e-6 < need && !seen.has(key + '|' + text)) {
      seen.add(key + '|' + text);
      fails.push({ text, ratio: Math.round(got * 100) / 100, need, fg: st.color, bg: bg.map(Math.round).join(','),
                   where: el.tagName + '.' + String(key).replace(/ /g, '.') });
    }
  }
  return fails;
}
"""
