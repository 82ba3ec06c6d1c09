// How big the compare panel's heatmaps are: two side by side while each keeps 120 px, else stacked, each as wide
// as the page allows; no taller than the page less the room for a side's title, pickers and legend above it.
import type { Viewport } from './state/store';

/** The side maps' axes: narrower than the main panel's, so that both sides fit beside each other in one group. */
export const SIDE_AXES = { left: 64, top: 56, overhang: 16 };
/** The axis labels beside a map's width, and what its slanted column labels take right of it. */
const AXIS = SIDE_AXES.left + 16;
/** The smallest map worth putting beside the other. */
const MIN_BESIDE = 120;

export function measureViewport(): Viewport {
  return { width: document.documentElement.clientWidth, height: window.innerHeight };
}

const tallest = (vp: Viewport) => Math.max(200, vp.height - 220);
const twoWide = (vp: Viewport) => Math.floor((vp.width - 52) / 2) - AXIS;

export function layoutOf(vp: Viewport): 'row' | 'stacked' {
  return twoWide(vp) >= MIN_BESIDE ? 'row' : 'stacked';
}

export function sideSize(vp: Viewport): number {
  const two = twoWide(vp);
  if (two >= MIN_BESIDE) return Math.min(900, two, tallest(vp));
  return Math.max(160, Math.min(900, vp.width - 40 - AXIS, tallest(vp)));
}

export function diffSize(vp: Viewport): number {
  return Math.max(160, Math.min(900, vp.width - 40 - 84 - 16, tallest(vp)));
}

/** Measures the page again once a resize has settled. */
export function followViewport(set: (vp: Viewport) => void): void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  window.addEventListener('resize', () => {
    clearTimeout(timer);
    timer = setTimeout(() => set(measureViewport()), 120);
  });
}
