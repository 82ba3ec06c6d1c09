// The head atlas panel's page: a scatter of every head (axes chosen from the metrics, colour by layer or by
// dominant term), a sortable table, the hovered head's profile and the clicked head's top examples. With a second
// atlas the scatter draws an arrow per head from the first to the second and the table shows the differences.
// The scatter's points are painted once per choice; hover repaints only an overlay canvas above them.
import { ATLAS_PROTOCOL_VERSION, type AtlasToHost, type AtlasToWebview, type AtlasView } from '../../src/shared/atlas';
import { hostChannel } from '../common/vscode-api';
import { listenForHost, showEmpty } from '../common/host-messages';
import { AtlasPage } from './page';

const host = hostChannel<AtlasToHost, unknown>();
let page: AtlasPage | undefined;
listenForHost<AtlasToWebview>({
  init: (m: { atlases: AtlasView[] }) => {
    page ??= new AtlasPage(host.post);
    page.show(m.atlases);
  },
  empty: (m) => {
    page = undefined;
    showEmpty(m.message);
  },
});
host.post({ type: 'ready', version: ATLAS_PROTOCOL_VERSION });
