// What the compare page says about itself on #app for its CSS (and the tests): the tab on screen, a pin, the
// hovered span, and whether the sides stand in a row or stacked.
import { $ } from '../common/dom';
import { layoutOf } from './sizes';
import { $focus } from './state/selectors';
import { $pinned, $view, $viewport } from './state/store';

export function followPageFlags(): void {
  const render = () => {
    const app = $('#app');
    app.dataset.view = $view.get();
    app.dataset.pinned = $pinned.get() ? 'true' : '';
    const g = $focus.get().group;
    app.dataset.hoverGroup = g === null ? '' : String(g);
    app.dataset.layout = layoutOf($viewport.get());
  };
  for (const $s of [$view, $pinned, $focus, $viewport]) $s.listen(render);
}
