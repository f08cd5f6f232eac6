import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The checkout's root, the folder the paths below are relative to. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

const IMPORT = /(?:^|\n)\s*(?:import|export)\s(type\s)?(?:[^'"]*?\sfrom\s)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g

/**
 * The project files a source imports, as paths from the root: static imports, re-exports,
 * type-only ones and `import()`, as DESIGN §2's layers count them (test/layers.test.ts). With
 * `loadedWith`, only those that load with the source: no `import()`, nothing imported for its
 * types alone (test/index.test.ts).
 */
export function importsOf (file: string, text: string, loadedWith = false): string[] {
  const found: string[] = []
  for (const [, typeOnly, specifier, dynamic] of text.matchAll(IMPORT)) {
    if (loadedWith && (typeOnly !== undefined || dynamic !== undefined)) continue
    const path = specifier ?? dynamic!
    if (!path.startsWith('.')) continue
    found.push(relative(ROOT, join(ROOT, dirname(file), path)).replace(/\.js$/, '.ts'))
  }
  return found
}
