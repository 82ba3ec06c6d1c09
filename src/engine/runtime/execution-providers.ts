import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ExecutionProviderSetting } from '../types';

/**
 * The providers to try, in order, for a setting. CPU always ends the list, so a failing GPU provider falls
 * back. `auto` tries the platform's native GPU provider first (CUDA on Linux/Windows x64 — present only when
 * onnxruntime-node was installed with its CUDA files —, DirectML on Windows, CoreML on macOS); WebGPU is tried
 * only when asked for, because on machines without a GPU adapter it fails slowly.
 */
export function providerOrder(setting: ExecutionProviderSetting, platform: NodeJS.Platform = process.platform): string[] {
  const auto: Record<string, string[]> = { linux: ['cuda'], win32: ['cuda', 'dml'], darwin: ['coreml'] };
  const first =
    setting === 'auto' ? (auto[platform] ?? []).filter((p) => p !== 'cuda' || cudaInstalled(platform)) : setting === 'cpu' ? [] : [setting];
  return [...first, 'cpu'];
}

/** onnxruntime-node's CUDA provider library is only there when it was installed with its CUDA files. */
function cudaInstalled(platform: NodeJS.Platform): boolean {
  try {
    const bin = path.join(path.dirname(require.resolve('onnxruntime-node')), '..', 'bin', 'napi-v6', platform, process.arch);
    return fs.existsSync(path.join(bin, platform === 'win32' ? 'onnxruntime_providers_cuda.dll' : 'libonnxruntime_providers_cuda.so'));
  } catch {
    return false;
  }
}

export { EXECUTION_PROVIDERS } from '../../shared/providers';
