// Execution providers, written once: the setting's values (package.json lists the same, checked by a unit test).
export type ExecutionProviderSetting = 'auto' | 'cuda' | 'dml' | 'coreml' | 'webgpu' | 'cpu';
export const EXECUTION_PROVIDERS: readonly ExecutionProviderSetting[] = ['auto', 'cuda', 'dml', 'coreml', 'webgpu', 'cpu'];
