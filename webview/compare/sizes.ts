// How big the compare panel's heatmaps are: two side by side while each keeps 260 px, else stacked, each as wide
// as the page allows; no taller than the page less the room for a side's title, pickers and legend above it.
import type { Viewport } from './state/store';

/** The heatmap's axis labels, beside its width. */
const AXIS = 84;

export function measureViewport(): Viewport {
  return { width: document.documentElement.clientWidth, height: window.innerHeight };
}

const tallest = (vp: Viewport) => Math.max(260, vp.height - 220);
const twoWide = (vp: Viewport) => Math.floor((vp.width - 40) / 2) - AXIS - 24;

export function layoutOf(vp: Viewport): 'row' | 'stacked' {
  return twoWide(vp) >= 260 ? 'row' : 'stacked';
}

export function sideSize(vp: Viewport): number {
  const two = twoWide(vp);
  if (two >= 260) return Math.min(560, two, tallest(vp));
  return Math.max(160, Math.min(560, vp.width - 40 - AXIS - 16, tallest(vp)));
}

export function diffSize(vp: Viewport): number {
  return Math.max(160, Math.min(720, vp.width - 40 - AXIS - 16, tallest(vp)));
}

/** Measures the page again once a resize has settled. */
export function followViewport(set: (vp: Viewport) => void): void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  window.addEventListener('resize', () => {
    clearTimeout(timer);
    timer = setTimeout(() => set(measureViewport()), 120);
  });
}
