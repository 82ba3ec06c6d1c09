import type { TensorData } from '../types';
import { type AttrValue, type GraphDef, type InitializerDef, type NodeDef, OnnxType, type OnnxTypeId, type ValueDef } from './onnx-proto';
import { toFloat32Bytes } from './float32';

/** Weight bytes the graph needs written next to it (converted dtypes), or files it references in place. */
export interface WeightPlacement {
  /** Bytes to append to the graph's own weights file, in order, each at its recorded offset. */
  blobs: Uint8Array[];
  blobBytes: number;
  /** location (file name next to the model) → absolute path of a checkpoint file referenced in place. */
  linked: Map<string, string>;
}

export const WEIGHTS_FILE = 'weights.bin';
// ORT memory-maps external data at page-aligned offsets; keep our own blobs aligned.
const ALIGN = 4096;

/** A small DSL over ONNX GraphProto: nodes get unique names, outputs get unique value names. */
export class GraphBuilder {
  private nodes: NodeDef[] = [];
  private inits: InitializerDef[] = [];
  private inputs: ValueDef[] = [];
  private outputs: ValueDef[] = [];
  private counter = 0;
  private weightNames = new Map<string, string>();
  /** Where the bytes of each shareKey went: tensors that share a storage in the checkpoint share it here too, so
   *  870 names for one view cost one copy in the graph's weights file, not 870. */
  private sharedBytes = new Map<string, InitializerDef['external']>();
  readonly placement: WeightPlacement = { blobs: [], blobBytes: 0, linked: new Map() };

  input(name: string, type: OnnxTypeId, dims: (number | string)[]): string {
    this.inputs.push({ name, type, dims });
    return name;
  }

  /** Declares `value` a graph output called `name` (through an Identity when the names differ). */
  output(value: string, name: string, type: OnnxTypeId, dims: (number | string)[]): void {
    if (value !== name) this.node('Identity', [value], {}, name);
    this.outputs.push({ name, type, dims });
  }

  /** Adds a node; returns its (single) output name. */
  node(op: string, inputs: string[], attrs: Record<string, AttrValue> = {}, outName?: string): string {
    const id = this.counter++;
    const out = outName ?? `${op.toLowerCase()}_${id}`;
    this.nodes.push({ op, inputs, outputs: [out], name: `${op}_${id}`, attrs });
    return out;
  }

  /** Adds a node with several outputs. */
  nodeN(op: string, inputs: string[], n: 2, attrs?: Record<string, AttrValue>): [string, string];
  nodeN(op: string, inputs: string[], n: 3, attrs?: Record<string, AttrValue>): [string, string, string];
  nodeN(op: string, inputs: string[], n: number, attrs?: Record<string, AttrValue>): string[];
  nodeN(op: string, inputs: string[], n: number, attrs: Record<string, AttrValue> = {}): string[] {
    const id = this.counter++;
    const outs = Array.from({ length: n }, (_, k) => `${op.toLowerCase()}_${id}_${k}`);
    this.nodes.push({ op, inputs, outputs: outs, name: `${op}_${id}`, attrs });
    return outs;
  }

  constInt64(values: number[], dims: number[] = [values.length]): string {
    const raw = new Uint8Array(new BigInt64Array(values.map((v) => BigInt(v))).buffer);
    const name = `const_i64_${this.counter++}`;
    this.inits.push({ name, type: OnnxType.INT64, dims, raw });
    return name;
  }

  constFloat(values: number[], dims: number[] = [values.length]): string {
    const raw = new Uint8Array(new Float32Array(values).buffer);
    const name = `const_f32_${this.counter++}`;
    this.inits.push({ name, type: OnnxType.FLOAT, dims, raw });
    return name;
  }

  /**
   * A checkpoint tensor as a float32 initializer. float32 tensors that lie contiguous in a checkpoint file are
   * referenced in place (no copy); others are converted and appended to the graph's weights file.
   */
  weight(t: TensorData): string {
    const known = this.weightNames.get(t.name);
    if (known) return known;
    const name = `w:${t.name}`;
    let external: InitializerDef['external'] = t.shareKey === undefined ? undefined : this.sharedBytes.get(t.shareKey);
    if (external !== undefined) {
      // the same bytes as an earlier weight
    } else if (t.dtype === 'float32' && t.file !== undefined && t.offset !== undefined) {
      const location = this.linkName(t.file);
      external = { location, offset: t.offset, length: t.byteLength };
    } else {
      const bytes = toFloat32Bytes(t);
      const offset = Math.ceil(this.placement.blobBytes / ALIGN) * ALIGN;
      if (offset > this.placement.blobBytes) this.placement.blobs.push(new Uint8Array(offset - this.placement.blobBytes));
      this.placement.blobs.push(bytes);
      this.placement.blobBytes = offset + bytes.length;
      external = { location: WEIGHTS_FILE, offset, length: bytes.length };
    }
    if (t.shareKey !== undefined) this.sharedBytes.set(t.shareKey, external);
    this.inits.push({ name, type: OnnxType.FLOAT, dims: t.shape, external });
    this.weightNames.set(t.name, name);
    return name;
  }

  private linkName(file: string): string {
    for (const [loc, abs] of this.placement.linked) if (abs === file) return loc;
    const loc = `ckpt${this.placement.linked.size}.bin`;
    this.placement.linked.set(loc, file);
    return loc;
  }

  build(name: string): GraphDef {
    return { name, nodes: this.nodes, inputs: this.inputs, outputs: this.outputs, initializers: this.inits };
  }
}
