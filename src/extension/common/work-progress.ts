// What the progress notifications say while something long runs: the stage, "layer i of L" where the engine
// reports layers, and how long is left. An explain's length is estimated before it starts from the engine's
// FLOPs count scaled by the rate this machine showed on earlier explains of the same model (vscode-free).

/** FLOPs per millisecond assumed before any explain of a model was timed: a 2-core CPU's order of magnitude. */
export const DEFAULT_FLOPS_PER_MS = 1e7;
/** An explain expected to take longer than this says so before it starts. */
export const LONG_WAIT_MS = 5000;
/** The timed runs kept, per model key. */
export type RateSnapshot = Record<string, { flops: number; perMs: number }[]>;
/** Timed runs kept per model. */
const KEPT = 8;

/**
 * The forward-pass rates measured per model (and execution provider). The rate falls with length (attention's n²
 * arrays leave the caches), so an estimate uses the timed run closest in size (FLOPs, on a log scale).
 */
export class RateBook {
  private readonly runs = new Map<string, { flops: number; perMs: number }[]>();

  /** `saved`: a snapshot from an earlier session (anything malformed in it is dropped); `changed`: called after each
   *  timed run with the new snapshot, to keep it for the next session. */
  constructor(
    saved?: unknown,
    private readonly changed?: (snapshot: RateSnapshot) => void,
  ) {
    if (!saved || typeof saved !== 'object') return;
    for (const [key, list] of Object.entries(saved as Record<string, unknown>)) {
      if (!Array.isArray(list)) continue;
      const positive = (x: unknown): x is number => typeof x === 'number' && x > 0 && Number.isFinite(x);
      const ok = list.filter((r): r is { flops: number; perMs: number } => {
        const o = (r ?? {}) as { flops?: unknown; perMs?: unknown };
        return typeof r === 'object' && positive(o.flops) && positive(o.perMs);
      });
      if (ok.length)
        this.runs.set(
          key,
          ok.slice(-KEPT).map((r) => ({ flops: Number(r.flops), perMs: Number(r.perMs) })),
        );
    }
  }

  /** What the constructor reads back. */
  snapshot(): RateSnapshot {
    return Object.fromEntries([...this.runs].map(([k, v]) => [k, v.map((r) => ({ ...r }))]));
  }

  /** FLOPs per ms for a run of `flops` on `key`, or the default when nothing was timed yet. */
  rate(key: string, flops = 0): { flopsPerMs: number; measured: boolean } {
    const runs = this.runs.get(key);
    if (!runs?.length) return { flopsPerMs: DEFAULT_FLOPS_PER_MS, measured: false };
    const far = (r: { flops: number }) => Math.abs(Math.log(r.flops) - Math.log(Math.max(flops, 1)));
    const nearest = runs.reduce((a, b) => (far(b) < far(a) ? b : a));
    return { flopsPerMs: nearest.perMs, measured: true };
  }

  /** One timed forward pass. Tiny inputs are dominated by fixed costs and would make long ones look fast: skipped. */
  record(key: string, flops: number, ms: number): void {
    if (!(flops > 0) || !(ms >= 50)) return;
    // A run of about the same size replaces the one before (the newest timing wins).
    const runs = (this.runs.get(key) ?? []).filter((r) => Math.abs(Math.log(r.flops / flops)) > Math.log(1.25));
    this.runs.set(key, [...runs, { flops, perMs: flops / ms }].slice(-KEPT));
    this.changed?.(this.snapshot());
  }

  /** Expected milliseconds of `flops` on `key`. */
  etaMs(key: string, flops: number): number {
    return flops / this.rate(key, flops).flopsPerMs;
  }
}

/** "12 s", "2 min 5 s", "< 1 s". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 1000) return '< 1 s';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  const rest = s % 60;
  return rest ? `${m} min ${rest} s` : `${m} min`;
}

/** The notification line before the forward pass: its size and, for a long one, that it will take a while. */
export function explainStartText(e: { tokens: number; layers: number; etaMs: number; measured: boolean; pair?: boolean }): string {
  const what = `${e.pair ? 'a sentence pair, ' : ''}${e.tokens.toLocaleString('en-US')} tokens`;
  const guess = e.measured ? '' : ' (a first guess: not yet timed on this machine)';
  const eta = e.etaMs >= LONG_WAIT_MS ? ` — this will take about ${formatDuration(e.etaMs)}${guess}` : '';
  return `forward pass, ${e.layers} layers, ${what}${eta}…`;
}

/**
 * While the forward pass runs: the layer it is about at, elapsed time against the estimate. The pass is one call
 * into the runtime, which reports nothing until it ends, and a layer costs the same at every depth, so the layer
 * is the estimate's share of the time (said as such: "about layer 5 of 12").
 */
export function explainRunningText(e: { tokens: number; layers: number; etaMs: number; elapsedMs: number }): string {
  const left = e.etaMs - e.elapsedMs;
  const tail = left > 1000 ? `about ${formatDuration(left)} left` : 'finishing (longer than estimated)';
  const layer = estimatedLayer(e);
  return `forward pass, ${e.tokens.toLocaleString('en-US')} tokens: about layer ${layer} of ${e.layers} · ${formatDuration(e.elapsedMs)} so far · ${tail}`;
}

/** The layer (1-based) the pass is at if every layer takes the same time, never past the last. */
export function estimatedLayer(e: { layers: number; etaMs: number; elapsedMs: number }): number {
  if (!(e.etaMs > 0) || !(e.layers > 0)) return 1;
  return Math.min(e.layers, Math.max(1, Math.floor((e.elapsedMs / e.etaMs) * e.layers) + 1));
}

/** The notification's percent for the pass so far: the estimate's share, held below 95 until the pass ends. */
export function explainPercent(e: { etaMs: number; elapsedMs: number }): number {
  if (!(e.etaMs > 0)) return 0;
  return Math.min(95, (100 * e.elapsedMs) / e.etaMs);
}

/** Time left from the share done so far (undefined before anything is done). */
export function remainingMs(done: number, total: number, elapsedMs: number): number | undefined {
  if (!(done > 0) || !(total > done)) return done >= total && total > 0 ? 0 : undefined;
  return (elapsedMs / done) * (total - done);
}

/** A sweep's line: "ranking heads: layer 3 of 12 · 40 of 144 cells · about 12 s left". */
export function sweepText(p: {
  stage: string;
  done: number;
  total: number;
  unit: string;
  elapsedMs: number;
  layer?: number;
  layers?: number;
  detail?: string;
}): string {
  const parts = [p.stage];
  if (p.layer !== undefined && p.layers !== undefined) parts.push(`layer ${p.layer + 1} of ${p.layers}`);
  if (p.detail) parts.push(p.detail);
  if (p.total > 0) parts.push(`${p.done} of ${p.total} ${p.unit}`);
  const left = remainingMs(p.done, p.total, p.elapsedMs);
  parts.push(left === undefined ? 'estimating…' : `about ${formatDuration(left)} left`);
  return parts.join(' · ');
}

/** The share of a sweep one progress report adds, in the notification's percent (it sums to at most 100). */
export function percentStep(before: number, after: number, total: number): number {
  if (!(total > 0)) return 0;
  const clamp = (x: number) => Math.min(total, Math.max(0, x));
  return (100 * (clamp(after) - clamp(before))) / total;
}

/** One report of a sweep (sweepText's fields less the elapsed time, which the tracker keeps). */
export type WorkStep = Omit<Parameters<typeof sweepText>[0], 'elapsedMs'>;

/** A long run's line in a progress notification: `report` each step, `done` when it ends (however it ends). */
export interface WorkTracker {
  report(step: WorkStep): void;
  done(): void;
}

/** Opens a tracker titled `title`; its Cancel button aborts `abort`. */
export type TrackWork = (title: string, abort: AbortController) => WorkTracker;
