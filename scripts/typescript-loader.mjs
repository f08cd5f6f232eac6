/**
 * The tests' TypeScript loader (`node-arg` in .taprc): runs this checkout's `.ts` files through
 * TypeScript's `transpileModule`, as tap's ts-node plugin did, and keeps each output on disk.
 * Why by hand, in docs/testing.md: every test file is its own process, and ts-node has no cache,
 * so each one loaded TypeScript and transpiled the same hundred modules again (1.8 s of CPU a
 * file, measured).
 */
import { register } from 'node:module'

register('./typescript-hooks.mjs', import.meta.url)
