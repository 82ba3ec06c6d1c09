// The host side of the Patching tab: runs a trace of the explained (clean) text against the corrupted text the
// reader typed, reports progress ("layer i of L, k of N reruns"), cancels on request, keeps the last grid of each
// trace for export, and answers the engine's refusals as one line. No `vscode` here: RunHost passes in the panel.
import type { ExplainResult, LensModel, SweepTarget } from '../../engine';
import { isLensError } from '../../engine';
import type { RunToWebview } from '../../shared/interventions';
import type { PatchToHost, PatchTraceName, PatchView } from '../../shared/patching';
import { patchCsv, patchFileStem } from '../../shared/patching';
import type { TrackWork } from '../common/work-progress';
import { patchView } from './patching-view';

/** What a trace needs from the panel (RunHost's RunPanel gives it). */
export interface PatchPanel {
  current(): { id: number; text: string; result: ExplainResult; model?: LensModel } | undefined;
  plain(): ExplainResult | undefined;
  post(m: RunToWebview): void;
  save(format: 'json' | 'csv', content: string, target?: string, stem?: string): Promise<string | undefined>;
  log(line: string): void;
  track?: TrackWork;
}

/** The explained input of a result (RunHost's explainedInput: a sentence pair's two texts). */
export type InputOf = (plain: ExplainResult, shown: string) => { text: string; pair?: string };

const TRACE_WORDS: Record<PatchTraceName, string> = {
  resid: 'causal trace (every layer × position)',
  heads: 'each head’s term patched alone',
  flow: 'attention edges knocked out',
};

export class PatchHost {
  /** The last finished grid of each trace (what Export writes). */
  readonly last: Partial<Record<PatchTraceName, PatchView>> = {};

  constructor(
    private readonly panel: PatchPanel,
    private readonly running: Map<number, AbortController>,
    private readonly inputOf: InputOf,
  ) {}

  async handle(m: PatchToHost): Promise<void> {
    if (m.type === 'exportPatch') {
      await this.export(m.trace, m.format).catch((e: unknown) =>
        this.panel.log(`patching export failed: ${e instanceof Error ? e.message : String(e)}`),
      );
      return;
    }
    const fail = (error: string, cancelled = false) => this.panel.post({ type: 'runResult', id: m.id, ok: false, error, cancelled });
    const cur = this.panel.current();
    if (!cur || cur.id !== m.resultId) return fail('this result has been replaced: run it again');
    const input = this.inputOf(this.panel.plain() ?? cur.result, cur.text);
    if (m.type === 'patchSetup') {
      this.panel.post({
        type: 'runResult',
        id: m.id,
        ok: true,
        patchSetup: { text: input.text, ...(input.pair === undefined ? {} : { pair: input.pair }) },
      });
      return;
    }
    const model = cur.model;
    if (!model) return fail('the model behind this view is closed (a reload or a setting changed): explain again, then run this');
    const controller = new AbortController();
    this.running.set(m.id, controller);
    const t0 = performance.now();
    const tracker = this.panel.track?.('DeBERTa Lens: patching', controller);
    const layers = model.info.layers;
    const onProgress = (p: { done: number; total: number; layer: number }) => {
      this.panel.post({ type: 'runProgress', id: m.id, ...p });
      tracker?.report({ stage: TRACE_WORDS[m.trace], unit: m.trace === 'flow' ? 'layers walked back' : 'reruns', layers, ...p });
    };
    const target: SweepTarget | undefined = m.label === undefined ? undefined : { label: m.label };
    try {
      const r = await model
        .patch(
          {
            text: input.text,
            ...(input.pair === undefined ? {} : { pair: input.pair }),
            corrupt: m.corrupt,
            ...(m.corruptPair === undefined ? {} : { corruptPair: m.corruptPair }),
            trace: m.trace,
            ...(target ? { target } : {}),
            ...(m.position === null ? {} : { position: m.position }),
            ...(m.threshold === undefined ? {} : { threshold: m.threshold }),
            onProgress,
          },
          controller.signal,
        )
        .finally(() => tracker?.done());
      const view = patchView(r, performance.now() - t0);
      this.last[m.trace] = view;
      this.panel.post({ type: 'runResult', id: m.id, ok: true, patching: view });
    } catch (e) {
      const cancelled = isLensError(e) && e.code === 'cancelled';
      fail(cancelled ? 'cancelled' : e instanceof Error ? e.message : String(e), cancelled);
    } finally {
      this.running.delete(m.id);
    }
  }

  /** Writes the last grid of `trace` (`target`: tests and scripts; else a save dialog). */
  async export(trace: PatchTraceName, format: 'json' | 'csv', target?: string): Promise<string | undefined> {
    const v = this.last[trace];
    if (!v) throw new Error(`no ${TRACE_WORDS[trace]} yet: run it in the Patching tab first`);
    const content = format === 'csv' ? patchCsv(v) : `${JSON.stringify(v, null, 1)}\n`;
    const file = await this.panel.save(format, content, target, patchFileStem(trace));
    if (file) this.panel.log(`exported the ${TRACE_WORDS[trace]} (${format}) to ${file}`);
    return file;
  }
}
