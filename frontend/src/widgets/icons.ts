/**
 * Small inline SVG icons drawn in the text colour (currentColor): an emoji such as 🔇 renders as an empty box where
 * no colour-emoji font is installed (a bare Linux desktop, a container's Chromium).
 */
const SVG = 'http://www.w3.org/2000/svg';

/** A loudspeaker with a cross: "mute". `label` is what a screen reader says (the button's title stays its own). */
export function muteIcon(label = 'mute'): SVGSVGElement {
  const icon = document.createElementNS(SVG, 'svg');
  icon.setAttribute('viewBox', '0 0 16 16');
  icon.setAttribute('width', '12');
  icon.setAttribute('height', '12');
  icon.setAttribute('class', 'icon icon-mute');
  icon.setAttribute('role', 'img');
  icon.setAttribute('aria-label', label);
  const body = document.createElementNS(SVG, 'path');
  body.setAttribute('d', 'M2 6h3l4-3v10l-4-3H2z');
  body.setAttribute('fill', 'currentColor');
  const cross = document.createElementNS(SVG, 'path');
  cross.setAttribute('d', 'M11 6l4 4M15 6l-4 4');
  cross.setAttribute('stroke', 'currentColor');
  cross.setAttribute('stroke-width', '1.6');
  cross.setAttribute('stroke-linecap', 'round');
  icon.append(body, cross);
  return icon;
}
