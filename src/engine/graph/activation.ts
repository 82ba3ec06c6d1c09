import type { ModelSpec } from '../types';
import type { GraphBuilder } from './graph-builder';

/** HF's ACT2FN functions the configs name, as ONNX nodes (the encoder's FFN and the prediction heads share it). */
export function activation(g: GraphBuilder, x: string, act: ModelSpec['hiddenAct']): string {
  switch (act) {
    case 'gelu':
      return g.node('Gelu', [x]);
    case 'gelu_new':
    case 'gelu_fast':
      return g.node('Gelu', [x], { approximate: 'tanh' });
    case 'relu':
      return g.node('Relu', [x]);
    case 'tanh':
      return g.node('Tanh', [x]);
    case 'silu':
      return g.node('Mul', [x, g.node('Sigmoid', [x])]);
    case 'quick_gelu':
      return g.node('Mul', [x, g.node('Sigmoid', [g.node('Mul', [x, g.constFloat([1.702], [])])])]);
  }
}
