import { ProtoWriter } from './protobuf-writer';

/** ONNX TensorProto.DataType values we use. */
export const OnnxType = { FLOAT: 1, INT32: 6, INT64: 7, BOOL: 9, FLOAT16: 10, BFLOAT16: 16 } as const;
export type OnnxTypeId = (typeof OnnxType)[keyof typeof OnnxType];

export type AttrValue = number | string | number[] | { floats: number[] } | { float: number };

export interface NodeDef {
  op: string;
  inputs: string[];
  outputs: string[];
  name: string;
  attrs?: Record<string, AttrValue>;
  domain?: string;
}

export interface ValueDef {
  name: string;
  type: OnnxTypeId;
  /** A number is a fixed size, a string a symbolic one (e.g. "n"). */
  dims: (number | string)[];
}

export interface InitializerDef {
  name: string;
  type: OnnxTypeId;
  dims: number[];
  /** Inline bytes (small constants) … */
  raw?: Uint8Array;
  /** … or a reference into a file next to the model (ONNX external data). */
  external?: { location: string; offset: number; length: number };
}

export interface GraphDef {
  name: string;
  nodes: NodeDef[];
  inputs: ValueDef[];
  outputs: ValueDef[];
  initializers: InitializerDef[];
}

const AttrType = { FLOAT: 1, INT: 2, STRING: 3, FLOATS: 6, INTS: 7 } as const;

function encodeAttr(name: string, v: AttrValue): ProtoWriter {
  const w = new ProtoWriter().string(1, name);
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) throw new Error(`attribute ${name}: use { float } for non-integers`);
    w.int(3, v).int(20, AttrType.INT);
  } else if (typeof v === 'string') w.string(4, v).int(20, AttrType.STRING);
  else if (Array.isArray(v)) w.packedInts(8, v).int(20, AttrType.INTS);
  else if ('float' in v) w.float(2, v.float).int(20, AttrType.FLOAT);
  else {
    for (const f of v.floats) w.float(7, f);
    w.int(20, AttrType.FLOATS);
  }
  return w;
}

function encodeNode(n: NodeDef): ProtoWriter {
  const w = new ProtoWriter();
  for (const i of n.inputs) w.string(1, i);
  for (const o of n.outputs) w.string(2, o);
  w.string(3, n.name).string(4, n.op);
  for (const [k, v] of Object.entries(n.attrs ?? {})) w.message(5, encodeAttr(k, v));
  if (n.domain) w.string(7, n.domain);
  return w;
}

function encodeValue(v: ValueDef): ProtoWriter {
  const shape = new ProtoWriter();
  for (const d of v.dims) {
    const dim = new ProtoWriter();
    if (typeof d === 'number') dim.int(1, d);
    else dim.string(2, d);
    shape.message(1, dim);
  }
  const tensorType = new ProtoWriter().int(1, v.type).message(2, shape);
  const type = new ProtoWriter().message(1, tensorType);
  return new ProtoWriter().string(1, v.name).message(2, type);
}

function encodeInitializer(t: InitializerDef): ProtoWriter {
  const w = new ProtoWriter().packedInts(1, t.dims).int(2, t.type).string(8, t.name);
  if (t.external) {
    const entry = (k: string, v: string) => new ProtoWriter().string(1, k).string(2, v);
    w.message(13, entry('location', t.external.location));
    w.message(13, entry('offset', String(t.external.offset)));
    w.message(13, entry('length', String(t.external.length)));
    w.int(14, 1); // data_location = EXTERNAL
  } else {
    w.bytes(9, t.raw ?? new Uint8Array(0));
  }
  return w;
}

/** Serialises a ModelProto (IR version 9). */
export function encodeModel(g: GraphDef, opset: number, producer: string): Uint8Array {
  const graph = new ProtoWriter();
  for (const n of g.nodes) graph.message(1, encodeNode(n));
  graph.string(2, g.name);
  for (const t of g.initializers) graph.message(5, encodeInitializer(t));
  for (const i of g.inputs) graph.message(11, encodeValue(i));
  for (const o of g.outputs) graph.message(12, encodeValue(o));
  const opsetId = new ProtoWriter().string(1, '').int(2, opset);
  return new ProtoWriter().int(1, 9).string(2, producer).string(3, '1').message(7, graph).message(8, opsetId).finish();
}
