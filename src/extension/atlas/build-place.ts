// Where "Build Head Atlas for Folder…" reads and writes: the folder checked first (one line for an empty one or one
// without text files), the atlas in the extension's storage, one file per model and folder. No vscode here.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isCorpusFileName } from '../../analysis/atlas/corpus';
import { LensError } from '../../engine';

/**
 * One clear line for a folder the atlas cannot read: missing, empty, or without .txt/.md files. Asynchronous and
 * done at the first text file found: a folder of 100,000 files never holds the extension host's thread (the atlas
 * thread lists it in full).
 */
export async function checkCorpusFolder(folder: string): Promise<void> {
  let top: fs.Dir;
  try {
    if (!(await fs.promises.stat(folder)).isDirectory())
      throw new LensError(`${folder} is not a folder; pick a folder of .txt or .md files`);
    top = await fs.promises.opendir(folder);
  } catch (e) {
    if (e instanceof LensError) throw e;
    throw new LensError(`${folder}: cannot read it (${(e as NodeJS.ErrnoException).code ?? String(e)}); pick a readable folder`);
  }
  let any = false;
  const hasText = async (dir: fs.Dir): Promise<boolean> => {
    try {
      for await (const e of dir) {
        any = true;
        if (e.isFile() && isCorpusFileName(e.name)) return true;
        if (e.isDirectory()) {
          const sub = await fs.promises.opendir(path.join(dir.path, e.name)).catch(() => undefined);
          if (sub && (await hasText(sub))) return true;
        }
      }
    } catch {
      // An unreadable subfolder: the atlas skips it with a line.
    }
    return false;
  };
  if (await hasText(top)) return;
  if (!any) throw new LensError(`${folder} is empty; put .txt or .md files in it, or pick another folder`);
  throw new LensError(`${folder} has no .txt or .md file (subfolders searched too); the atlas reads plain text and Markdown`);
}

/** The atlas's file in global storage: one per (model folder, corpus folder), so a second run resumes the first. */
export function atlasOutPath(storage: string, modelDir: string, folder: string): string {
  const key = createHash('sha256')
    .update(`${path.resolve(modelDir)}\n${path.resolve(folder)}`)
    .digest('hex')
    .slice(0, 16);
  return path.join(storage, 'atlas', `${path.basename(folder).replace(/[^\w.-]/g, '_')}-${key}.json`);
}
