// The analysis tabs' dispatcher: the caption, body and readout boxes every view shares, the one line instead of
// a view BERT has no terms for, then the view itself. It imports the views; no view imports it.
import { isBertModel, type AnalysisView } from '../../../src/shared/protocol/lens';
import { el } from '../../common/dom';
import { onScreen } from '../state/selectors';
import { $picture } from '../state/picture';
import { renderAblation } from './ablation';
import { renderBertShares } from './bert-shares';
import { renderBuckets } from './buckets';
import { renderDiff } from './diff';
import { renderDistance } from './distance';
import { renderRanking } from './head-ranking';
import { renderPatching } from './patching';
import { renderInterventions } from './interventions';
import { renderLineView } from './line-view';
import { renderModelView } from './model-view';
import { renderRollout } from './rollout';
import { renderTermShares } from './term-shares';
import { BERT_NOT_APPLICABLE, viewCaption } from './view-captions';
import type { ViewContext } from './view-context';

/** Renders `view` into `box`; resolves when drawn. */
export async function renderAnalysis(view: AnalysisView, box: HTMLElement, ctx: ViewContext): Promise<void> {
  $picture.set(undefined);
  const init = onScreen()?.init;
  if (!init) return;
  const bert = isBertModel(init.model);
  const head = el('div', { class: 'analysis-head' }, [el('p', { id: 'analysis-caption', class: 'caption' }, [viewCaption(view, bert)])]);
  const body = el('div', { id: `${view}-view`, class: 'analysis-body', 'data-view': view });
  const out = el('div', { id: 'analysis-readout', class: 'readout', role: 'status', 'aria-live': 'polite' }, [
    'Hover a cell for its numbers.',
  ]);
  box.replaceChildren(head, body, out);
  const unavailable = bert ? BERT_NOT_APPLICABLE[view] : undefined;
  if (unavailable) {
    // One line instead of a view built on terms BERT does not have.
    body.append(el('p', { id: 'analysis-unavailable', class: 'caption' }, [unavailable]));
    head.remove();
    out.hidden = true;
    return;
  }
  switch (view) {
    case 'shares':
      return bert ? renderBertShares(body, ctx) : renderTermShares(body, ctx);
    case 'ablation':
      return renderAblation(body, ctx);
    case 'distance':
      return renderDistance(body, ctx);
    case 'buckets':
      return renderBuckets(body, ctx);
    case 'rollout':
      return renderRollout(body, ctx);
    case 'diff':
      return renderDiff(body, ctx);
    case 'interventions':
      return renderInterventions(body);
    case 'ranking':
      return renderRanking(body, ctx);
    case 'lines':
      return renderLineView(body, ctx);
    case 'model':
      return renderModelView(body, ctx);
    case 'patching':
      return renderPatching(body);
  }
}
