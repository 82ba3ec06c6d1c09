// Fine-tuned task heads as Hugging Face's save_pretrained stores them (the model's state_dict: encoder under
// `deberta.`/`bert.`, the head at the top level), found from the weights present and config.json:
//   - sequence classification: `pooler.dense.*` [D, D] (DeBERTa's ContextPooler at the top level; BERT's tanh pooler
//     inside the base model, `bert.pooler.dense`, which reads the same once the prefix is dropped) + `classifier.*`
//     [num_labels, D];
//   - token classification: `classifier.*` [num_labels, D] and no pooler;
//   - question answering: `qa_outputs.*` [2, D] (row 0 start, row 1 end);
//   - multiple choice: pooler + `classifier.*` [1, D] whatever num_labels says; only `architectures` tells it
//     from one-label regression, so it is read there.
// Nothing here throws: a checkpoint whose head is unusable still explains, so a defect becomes `problem`, the one
// line predict and ablate refuse with.
import * as path from 'node:path';
import type { ModelSpec, TensorData } from '../types';
import { FieldReader } from './config-fields';
import { shapeText } from './dtype';
import type { Checkpoint } from './index';
import { readJsonFile } from './json-file';
import { MAX_SMALL_JSON_BYTES } from './regular-file';

export type TaskKind = 'sequence-classification' | 'token-classification' | 'question-answering' | 'multiple-choice';
export type ProblemType = 'single_label_classification' | 'multi_label_classification' | 'regression';
/** How sequence-classification scores follow from the logits (Hugging Face's text-classification pipeline rule). */
export type ScoreFunction = 'softmax' | 'sigmoid' | 'none';

export interface TaskHead {
  kind: TaskKind;
  /** The `architectures` entry that names the head, if any. */
  architecture?: string;
  /** Prefix of the pooler's dense `.weight` [D, D] / `.bias` [D] and its activation (sequence classification, MC). */
  pooler?: { dense: string; act: ModelSpec['hiddenAct'] };
  /** Prefix of the output layer's `.weight` [rows, D] / `.bias` [rows]. */
  output: string;
  rows: number;
  /** Label names by id (classification kinds; empty for QA and multiple choice). */
  labels: string[];
  /** Sequence classification only: config's problem_type, or the one Hugging Face's loss infers without it. */
  problemType?: ProblemType;
  scoreFunction?: ScoreFunction;
}

export interface TaskHeadFound {
  head?: TaskHead;
  /** Why the head cannot be used (one line naming the file or setting). */
  problem?: string;
}

const KIND_OF_CLASS: [RegExp, TaskKind][] = [
  [/ForSequenceClassification$/, 'sequence-classification'],
  [/ForTokenClassification$/, 'token-classification'],
  [/ForQuestionAnswering$/, 'question-answering'],
  [/ForMultipleChoice$/, 'multiple-choice'],
];
const PROBLEM_TYPES: readonly string[] = ['single_label_classification', 'multi_label_classification', 'regression'];

/** config.json read again for the head's fields, through the checked reader the checkpoint loaded it with (size
 *  limit, errors naming the file): the object, or the one line why it cannot be read now. */
export function readConfigJson(ck: Pick<Checkpoint, 'dir'>): Record<string, unknown> | string {
  const file = path.join(ck.dir, 'config.json');
  try {
    const json = readJsonFile(file, 'config.json', MAX_SMALL_JSON_BYTES, 're-download it.');
    return json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : {};
  } catch (e) {
    return (e as Error).message;
  }
}

export function findTaskHead(ck: Checkpoint): TaskHeadFound {
  const configFile = path.join(ck.dir, 'config.json');
  const json = readConfigJson(ck);
  // Read and validated when the checkpoint loaded: a failure now means it changed or went since.
  if (typeof json === 'string') return { problem: json };
  const r = new FieldReader(json, configFile);
  const archs = Array.isArray(json.architectures) ? json.architectures.filter((a): a is string => typeof a === 'string') : [];
  let named: { architecture: string; kind: TaskKind } | undefined;
  for (const a of archs) for (const [re, kind] of KIND_OF_CLASS) if (!named && re.test(a)) named = { architecture: a, kind };

  const has = (name: string) => ck.weights.has(name);
  const D = ck.spec.hiddenSize;
  const hasPooler = has('pooler.dense.weight');
  let kind: TaskKind | undefined;
  if (has('qa_outputs.weight')) kind = 'question-answering';
  else if (has('classifier.weight')) {
    if (named?.kind === 'multiple-choice' && hasPooler) kind = 'multiple-choice';
    else kind = hasPooler ? 'sequence-classification' : 'token-classification';
  }
  const weightFiles = ck.weightFiles.map((f) => path.basename(f)).join(', ');
  if (kind === undefined) {
    if (!named) return {};
    const expected = expectedTensors(named.kind, ck.spec);
    return {
      problem: `${configFile}: architectures names ${named.architecture}, but ${weightFiles} holds no ${expected.join(', ')}: the head's weights are missing (explain still works on the encoder)`,
    };
  }
  if (ck.basePrefixed === false) {
    const prefix = ck.spec.architecture === 'bert' ? 'bert.' : 'deberta.';
    return {
      problem: `${weightFiles}: the encoder's tensors lack the "${prefix}" prefix while task-head tensors are present, a layout Hugging Face refuses as corrupted: re-save the model with save_pretrained`,
    };
  }
  const architecture = named?.architecture;
  const output = kind === 'question-answering' ? 'qa_outputs' : 'classifier';
  const pooled = kind === 'sequence-classification' || kind === 'multiple-choice';
  if (pooled && ck.spec.architecture !== 'bert') {
    const poolerSize = r.raw('pooler_hidden_size') ?? D;
    if (poolerSize !== D) {
      return {
        problem: `${configFile}: pooler_hidden_size ${JSON.stringify(poolerSize)} differs from hidden_size ${D}: DeBERTa's pooler reads the ${D}-wide [CLS] state and its classifier is ${D} wide, so this head cannot run; fix the config`,
      };
    }
  }
  // The weights' shapes, each named with its file when wrong.
  const shapeProblem = (name: string, shape: number[]): string | undefined => {
    const t = ck.weights.get(name);
    if (!t)
      return `${weightFiles}: tensor '${name}' ${shapeText(shape)} is missing (the ${kind} head needs ${expectedTensors(kind, ck.spec).join(', ')})`;
    if (t.shape.length !== shape.length || t.shape.some((s, k) => s !== shape[k]))
      return `${sourceOf(t, ck)}: tensor '${name}' has shape ${shapeText(t.shape)}, expected ${shapeText(shape)}`;
    return undefined;
  };
  let act: ModelSpec['hiddenAct'] = 'tanh';
  if (pooled) {
    const bad = shapeProblem('pooler.dense.weight', [D, D]) ?? shapeProblem('pooler.dense.bias', [D]);
    if (bad) return { problem: bad };
    if (ck.spec.architecture !== 'bert') {
      try {
        act = r.activation('pooler_hidden_act', 'gelu');
      } catch (e) {
        return { problem: (e as Error).message };
      }
    }
  }
  const weight = ck.weights.get(`${output}.weight`)!;
  const rows = weight.shape[0] ?? 0;
  const base = { kind, architecture, output, rows, ...(pooled ? { pooler: { dense: 'pooler.dense', act } } : {}) };
  const wantRows = (n: number, why: string): string | undefined =>
    shapeProblem(`${output}.weight`, [n, D]) ?? shapeProblem(`${output}.bias`, [n]) ?? (rows === n ? undefined : why);
  if (kind === 'question-answering') {
    const bad = wantRows(2, '');
    return bad ? { problem: `${bad} (one start and one end logit per token)` } : { head: { ...base, labels: [] } };
  }
  if (kind === 'multiple-choice') {
    const bad = wantRows(1, '');
    return bad ? { problem: `${bad} (one logit per choice)` } : { head: { ...base, labels: [] } };
  }
  const labels = labelNames(json, configFile);
  if (typeof labels === 'string') return { problem: labels };
  const bad = wantRows(labels.length, '');
  if (bad) {
    const said =
      json.id2label === undefined || json.id2label === null
        ? `no id2label (so ${labels.length} labels)`
        : `${labels.length} labels in id2label`;
    return { problem: `${bad}: config.json has ${said}; the config and the classifier do not belong together` };
  }
  if (kind === 'token-classification') return { head: { ...base, labels } };
  const raw = r.raw('problem_type');
  if (raw !== undefined && (typeof raw !== 'string' || !PROBLEM_TYPES.includes(raw))) {
    return { problem: `${configFile}: problem_type ${JSON.stringify(raw)} is not one of ${PROBLEM_TYPES.join(', ')}; fix the config` };
  }
  const given = raw as ProblemType | undefined;
  const problemType: ProblemType = given ?? (labels.length === 1 ? 'regression' : 'single_label_classification');
  // The text-classification pipeline: regression → the logit; multi-label or one label → sigmoid; else softmax.
  const scoreFunction: ScoreFunction =
    given === 'regression' ? 'none' : given === 'multi_label_classification' || labels.length === 1 ? 'sigmoid' : 'softmax';
  return { head: { ...base, labels, problemType, scoreFunction } };
}

/** id2label as a list by id, or one line saying what is wrong with it. Absent: num_labels (default 2) LABEL_i. */
function labelNames(json: Record<string, unknown>, file: string): string[] | string {
  const map = json.id2label;
  if (map === undefined || map === null) {
    const n = json.num_labels ?? 2;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1)
      return `${file}: num_labels must be a positive integer, got ${JSON.stringify(n)}`;
    return Array.from({ length: n }, (_, i) => `LABEL_${i}`);
  }
  if (typeof map !== 'object' || Array.isArray(map)) return `${file}: id2label must map label ids to names, got ${JSON.stringify(map)}`;
  const entries = Object.entries(map as Record<string, unknown>);
  const labels: string[] = new Array<string>(entries.length);
  for (const [key, name] of entries) {
    const id = /^\d+$/.test(key) ? Number(key) : NaN;
    if (!(id < entries.length)) {
      const ids = entries.map(([k]) => k).join(', ');
      return `${file}: id2label's ids (${ids}) are not 0…${entries.length - 1}: every label from 0 up must be named, with no holes`;
    }
    if (typeof name !== 'string') return `${file}: id2label names label ${key} with ${JSON.stringify(name)}, not a string`;
    labels[id] = name;
  }
  const seen = new Map<string, number>();
  for (const [id, name] of labels.entries()) {
    const before = seen.get(name);
    if (before !== undefined)
      return `${file}: id2label names labels ${before} and ${id} both "${name}": a prediction could not be named; give each label its own name`;
    seen.set(name, id);
  }
  const n = json.num_labels;
  if (n !== undefined && n !== null && n !== labels.length)
    return `${file}: num_labels ${JSON.stringify(n)} disagrees with the ${labels.length} labels of id2label`;
  return labels;
}

function expectedTensors(kind: TaskKind, spec: ModelSpec): string[] {
  const D = spec.hiddenSize;
  const pooler = [`pooler.dense.weight [${D}, ${D}]`, `pooler.dense.bias [${D}]`];
  if (kind === 'question-answering') return [`qa_outputs.weight [2, ${D}]`, 'qa_outputs.bias [2]'];
  if (kind === 'token-classification') return [`classifier.weight [num_labels, ${D}]`, 'classifier.bias [num_labels]'];
  const rows = kind === 'multiple-choice' ? '1' : 'num_labels';
  return [...pooler, `classifier.weight [${rows}, ${D}]`, `classifier.bias [${rows}]`];
}

function sourceOf(t: TensorData, ck: Checkpoint): string {
  return (t as { source?: string }).source ?? t.file ?? ck.dir;
}
