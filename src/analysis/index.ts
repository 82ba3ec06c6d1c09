// Public surface of the analysis layer: pure functions over ExplainResult or plain float32 matrices
// (`[n,n]` one head, `[H,n,n]` one layer, row-major). No vscode, no DOM: the CLI, the host and tests share it.
export type { PositionSpec } from './matrix';
export { cellShares, headShares, labelHead, termShareGrid, layerTerms, DEFAULT_THRESHOLDS, SHARE_TERMS } from './term-shares';
export type { TermSet, CellShares, ShareWeighting, HeadLabel, LabelThresholds, ShareGrid, ShareTerm } from './term-shares';
export { bertDistanceProfiles, bertShares, BERT_PROFILE_TERMS, BERT_SPLIT_LAYER } from './bert-layer0';
export type { BertProfileTerm } from './bert-layer0';
export { keptTerms, ablatedProbs, ablateTerms, ablateLayer } from './ablation';
export type { AblationPreset, AblationResult, MaskOptions } from './ablation';
export { distanceProfile, rowProfile, tableRowScores, rowDeltaRanges } from './distance-profile';
export type { DistanceProfile, RowProfile } from './distance-profile';
export { bucketLens } from './bucket-lens';
export type { BucketLens, BucketGroup, BucketZone } from './bucket-lens';
export { residualAttention, rollout, rolloutResult } from './rollout';
export { reduceMatrices, reduceHeads, aggregate, spanRows, tokensInRange, discountSpecialColumns } from './aggregate';
export type { ReduceOp } from './aggregate';
export { groupWords, poolGroups } from './words';
export type { MergeMode, WordGroup } from './words';
export { matchTokens, diffMatched, diffResults } from './selection-diff';
export type { TokenMatch, SelectionDiff } from './selection-diff';
export { toNpz, readNpz, readZip, npzChunks, writeNpzFile } from './export/npz';
export { encodeNpy, decodeNpy, npyHeader } from './export/npy';
export type { NpyArray } from './export/npy';
export { writeChunks } from './export/write-chunks';
export { toJson, toJsonText, jsonChunks, float32ForJson } from './export/json';
export { toHtmlReport } from './export/html-report';
export type { HtmlReportOptions } from './export/html-report';
