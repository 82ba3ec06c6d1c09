// Status bar item: the model in use, the execution provider that actually runs it, the last latency.
import * as vscode from 'vscode';

export class LensStatus {
  private readonly item = vscode.window.createStatusBarItem('debertaLens.status', vscode.StatusBarAlignment.Right, 100);

  constructor() {
    this.item.name = 'DeBERTa Lens';
    this.item.command = 'debertaLens.selectModel';
    this.idle('default model (not loaded)');
    this.item.show();
  }

  idle(model: string): void {
    this.item.text = `$(eye) DeBERTa`;
    this.item.tooltip = `DeBERTa Lens: ${model}. Click to select a model.`;
  }

  busy(what: string): void {
    this.item.text = `$(loading~spin) DeBERTa`;
    this.item.tooltip = `DeBERTa Lens: ${what}`;
  }

  ready(model: string, ep: string, ms?: number): void {
    const t = ms === undefined ? '' : ` · ${Math.round(ms)} ms`;
    this.item.text = `$(eye) ${model} · ${ep}${t}`;
    this.item.tooltip = `DeBERTa Lens: ${model} on ${ep}${ms === undefined ? '' : `, last explain ${ms.toFixed(0)} ms`}. Click to select a model.`;
  }

  dispose(): void {
    this.item.dispose();
  }
}
