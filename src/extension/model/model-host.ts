// Opens the model lazily, once, and hands the same instance to every Explain until a setting that shapes it
// (path, execution provider, token limit) changes. No `vscode` here: the open function is passed in.
import type { EngineOptions, LensModel } from '../../engine';
import type { LensSettings } from '../common/settings';
import { modelKey } from '../common/settings';

export type OpenModel = (dir: string, opts: EngineOptions) => Promise<LensModel>;

export class ModelHost {
  private key: string | undefined;
  private pending: Promise<LensModel> | undefined;
  private current: LensModel | undefined;

  constructor(
    private readonly open: OpenModel,
    private readonly defaultDir: string,
    private readonly log: (line: string) => void,
    /** Bundled models by the name the setting may hold (`bert-twin`) → folder. */
    private readonly bundledDirs: ReadonlyMap<string, string> = new Map(),
  ) {}

  /** The folder a settings value points at: the embedded default when the setting is empty, a bundled model by its name. */
  modelDir(s: LensSettings): string {
    return s.modelPath ? (this.bundledDirs.get(s.modelPath) ?? s.modelPath) : this.defaultDir;
  }

  /** The loaded model, if any (for the status bar). */
  get loaded(): LensModel | undefined {
    return this.current;
  }

  /** Returns the model for these settings, opening it on first use. Concurrent callers share one open. */
  get(s: LensSettings): Promise<LensModel> {
    const key = modelKey(s);
    if (this.pending && this.key === key) return this.pending;
    void this.dispose();
    this.key = key;
    const dir = this.modelDir(s);
    this.log(`opening model ${dir} (execution provider ${s.executionProvider}, max ${s.maxTokens} tokens)`);
    const p = this.open(dir, {
      executionProvider: s.executionProvider,
      maxTokens: s.maxTokens,
      maxTokensName: 'the debertaLens.maxTokens setting',
      cacheMaxGB: s.cacheMaxGB,
      log: this.log,
      // The extension host never parses the user's files itself (engine/model/load-process.ts).
      isolate: true,
    }).then(
      (m) => {
        if (this.pending === p) this.current = m;
        else void m.dispose(); // settings changed while it was opening
        return m;
      },
      (e: unknown) => {
        // A failed open is not cached: the user may fix the folder and try again.
        if (this.pending === p) {
          this.pending = undefined;
          this.key = undefined;
        }
        throw e;
      },
    );
    this.pending = p;
    return p;
  }

  /** Whether these settings would reuse the open model. */
  matches(s: LensSettings): boolean {
    return this.pending !== undefined && this.key === modelKey(s);
  }

  async dispose(): Promise<void> {
    const m = this.current;
    this.pending = undefined;
    this.current = undefined;
    this.key = undefined;
    if (m) {
      this.log(`closing model ${m.info.path}`);
      await m.dispose().catch((e: unknown) => this.log(`closing the model failed: ${String(e)}`));
    }
  }
}
