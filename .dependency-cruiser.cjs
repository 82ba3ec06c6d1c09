// Architecture checks for `npm run deps` (dependency-cruiser): no import cycles, and every layer imports only
// the layers below it. Type-only imports count too (tsPreCompilationDeps), since a type import still ties the
// importer to the module's shape.
//
// Layers, bottom to top:
//   src/shared                  code the host and the webview both run: imports no other layer, no Node, no vscode
//   src/engine                  the pure-Node runtime: no vscode, nothing above it
//   src/analysis                computations over engine results: no vscode (the CLI uses it), nothing above it
//   src/extension, src/cli      the two front ends: never each other, never the webview
//   webview                     the browser side: only itself and src/shared
//
// Inside src/engine: the ten layers listed in src/engine/index.ts (ENGINE_LAYERS below).

/** The engine's layers, bottom to top, as src/engine/index.ts lists them. */
const ENGINE_LAYERS = [
  { name: 'errors.ts, types.ts', path: '^src/engine/(errors|types)[.]ts$' },
  { name: 'checkpoint/, tokenizer/, zip/', path: '^src/engine/(checkpoint|tokenizer|zip)/' },
  { name: 'cache/, tokenizer-thread/', path: '^src/engine/(cache|tokenizer-thread)/' },
  { name: 'graph/', path: '^src/engine/graph/' },
  { name: 'runtime/, memory/', path: '^src/engine/(runtime|memory)/' },
  { name: 'result/', path: '^src/engine/result/' },
  { name: 'api.ts', path: '^src/engine/api[.]ts$' },
  { name: 'run/', path: '^src/engine/run/' },
  { name: 'model/', path: '^src/engine/model/' },
  { name: 'index.ts', path: '^src/engine/index[.]ts$' },
];
/** vscode has no runtime package (the host provides it); its types resolve to @types/vscode. */
const VSCODE = ['^vscode$', 'node_modules/@types/vscode/'];
const EXTENSION_FEATURES = '(lens|compare|atlas)';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle: split out what both sides need, or invert one dependency.',
      from: { path: '^(src|webview)/' },
      to: { circular: true },
    },

    // Between the top-level layers.
    {
      name: 'shared-is-the-bottom',
      severity: 'error',
      comment: 'src/shared runs on both sides: it imports no engine, analysis, extension, cli or webview code.',
      from: { path: '^src/shared/' },
      to: { path: '^(src/(engine|analysis|extension|cli)|webview)/' },
    },
    {
      name: 'shared-no-node',
      severity: 'error',
      comment: 'src/shared is bundled into the webview: no Node built-ins.',

      from: { path: '^src/shared/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'shared-no-vscode',
      severity: 'error',
      comment: 'src/shared is bundled into the webview: no vscode.',
      from: { path: '^src/shared/' },
      to: { path: VSCODE },
    },
    {
      name: 'engine-below-analysis-and-front-ends',
      severity: 'error',
      comment: 'The engine is used by the extension, the CLI and analysis; it imports none of them, nor the webview.',
      from: { path: '^src/engine/' },
      to: { path: '^(src/(analysis|extension|cli)|webview)/' },
    },
    {
      name: 'engine-no-vscode',
      severity: 'error',
      comment: 'The engine runs in plain Node (CLI, tests, worker threads): no vscode.',
      from: { path: '^src/engine/' },
      to: { path: VSCODE },
    },
    {
      name: 'analysis-below-front-ends',
      severity: 'error',
      comment: 'Analysis is shared by the extension and the CLI: it imports neither, nor the webview.',
      from: { path: '^src/analysis/' },
      to: { path: '^(src/(extension|cli)|webview)/' },
    },
    {
      name: 'analysis-no-vscode',
      severity: 'error',
      comment: 'The CLI runs analysis (exports) without VS Code.',
      from: { path: '^src/analysis/' },
      to: { path: VSCODE },
    },
    {
      name: 'extension-not-cli',
      severity: 'error',
      comment: 'The two front ends share code through engine, analysis or shared, not through each other.',
      from: { path: '^src/extension/' },
      to: { path: '^(src/cli|webview)/' },
    },
    {
      name: 'cli-not-extension',
      severity: 'error',
      comment: 'The two front ends share code through engine, analysis or shared, not through each other.',
      from: { path: '^src/cli/' },
      to: { path: '^(src/extension|webview)/' },
    },
    {
      name: 'cli-no-vscode',
      severity: 'error',
      comment: 'The CLI runs without VS Code.',
      from: { path: '^src/cli/' },
      to: { path: VSCODE },
    },
    {
      name: 'webview-only-itself-and-shared',
      severity: 'error',
      comment: 'The webview is a browser bundle: it imports webview/** and src/shared/** and npm packages only.',
      from: { path: '^webview/' },
      to: { path: '^src/', pathNot: '^src/shared/' },
    },
    {
      name: 'webview-no-node',
      severity: 'error',
      comment: 'The webview is a browser bundle: no Node built-ins.',
      from: { path: '^webview/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'webview-no-vscode',
      severity: 'error',
      comment: 'The webview talks to the host through postMessage, never the vscode module.',
      from: { path: '^webview/' },
      to: { path: VSCODE },
    },

    // Inside the webview: common below the pages, the pages apart.
    {
      name: 'webview-common-below-panels',
      severity: 'error',
      comment: 'webview/common serves every page (lens, compare, the HTML report): it imports none of them.',
      from: { path: '^webview/common/' },
      to: { path: '^webview/(lens|compare|atlas|report)/' },
    },
    {
      name: 'webview-panels-apart',
      severity: 'error',
      comment: 'The pages (lens, compare, the HTML report) share code through webview/common or src/shared.',
      from: { path: '^webview/(lens|compare|atlas|report)/' },
      to: { path: '^webview/(lens|compare|atlas|report)/', pathNot: '^webview/$1/' },
    },

    // Inside the extension: common at the bottom, model (opening and picking a model) above it, the panels' host
    // halves (lens, compare) on top and apart; src/extension/*.ts is the composition root.
    {
      name: 'extension-common-below-all',
      severity: 'error',
      comment: 'src/extension/common serves every folder of the extension: it imports none of them.',
      from: { path: '^src/extension/common/' },
      to: { path: `^src/extension/(${EXTENSION_FEATURES.slice(1, -1)}|model)/` },
    },
    {
      name: 'extension-model-below-features',
      severity: 'error',
      comment: 'src/extension/model opens and picks models for every panel: it imports no panel.',
      from: { path: '^src/extension/model/' },
      to: { path: `^src/extension/${EXTENSION_FEATURES}/` },
    },
    {
      name: 'extension-features-apart',
      severity: 'error',
      comment:
        "The panels' host halves (lens, compare) share code through extension/common, extension/model, engine or " +
        'shared; src/extension/*.ts is the composition root and may import any of them.',
      from: { path: `^src/extension/${EXTENSION_FEATURES}/` },
      to: { path: `^src/extension/${EXTENSION_FEATURES}/`, pathNot: '^src/extension/$1/' },
    },

    // Inside the engine: the ten layers that src/engine/index.ts lists, each importing only its own layer or
    // those below it (one rule per layer, built from ENGINE_LAYERS).
    ...ENGINE_LAYERS.map((layer, k) => ({
      name: `engine-layer-${k + 1}-imports-down`,
      severity: 'error',
      comment: `${layer.name} sits in layer ${k + 1} of src/engine (see src/engine/index.ts): it imports no layer above it.`,
      from: { path: layer.path },
      to: { path: ENGINE_LAYERS.slice(k + 1).map((above) => above.path) },
    })).filter((rule) => rule.to.path.length > 0),
    {
      name: 'engine-file-has-a-layer',
      severity: 'error',
      comment: 'Every engine file belongs to one of the layers in src/engine/index.ts: add its folder there and here.',
      from: { path: '^src/engine/', pathNot: ENGINE_LAYERS.map((layer) => layer.path) },
      to: { path: '.' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(out|dist|node_modules)/' },
    // Type-only imports are dependencies too (see the top of this file).
    tsPreCompilationDeps: true,
    // The host's compiler options; the webview's tsconfig adds no paths or aliases, so its relative imports
    // resolve the same way.
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.d.ts', '.js', '.cjs', '.mjs', '.json'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
