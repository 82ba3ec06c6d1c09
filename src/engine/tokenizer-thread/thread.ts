// The tokenizer thread: loads a folder's tokenizer and encodes text on request, so that neither a large
// tokenizer file nor a slow or hostile pattern ever holds the extension host's thread.
import { parentPort, workerData } from 'node:worker_threads';
import { isLensError } from '../errors';
import { buildModelInput, loadTokenizer } from '../tokenizer';
import { publishStages, stageLabels } from '../tokenizer/stages';
import type { Tokenizer } from '../tokenizer/types';
import type { FromThread, ThreadData, ThreadFailure, ToThread } from './protocol';

const port = parentPort!;
const data = workerData as ThreadData;
publishStages(data.stage);

const send = (m: FromThread) => port.postMessage(m);
const failure = (e: unknown): ThreadFailure =>
  isLensError(e) ? { message: e.message, code: e.code, lens: true } : { message: String((e as Error)?.message ?? e), lens: false };

let tokenizer: Tokenizer;
loadTokenizer(data.dir).then(
  (t) => {
    tokenizer = t;
    send({ type: 'opened', kind: t.kind, special: t.special, vocabSize: t.vocabSize, stages: stageLabels() });
  },
  (e: unknown) => send({ type: 'failed', error: failure(e) }),
);

port.on('message', (m: ToThread) => {
  try {
    if (m.type === 'encode') send({ type: 'encoded', id: m.id, tokens: tokenizer.encode(m.text) });
    else if (m.type === 'input') send({ type: 'input', id: m.id, input: buildModelInput(tokenizer, m.text, m.pair) });
    else send({ type: 'pieces', id: m.id, pieces: m.ids.map((id) => tokenizer.idToPiece(id)) });
  } catch (e) {
    send({ type: 'failed', id: m.id, error: failure(e) });
  }
});
