/**
 * Module hooks for scripts/typescript-loader.mjs. A `.ts` file is transpiled alone
 * (`transpileModule`, the compiler options of tsconfig.json, ES modules), with its source map
 * inline and naming the file by path, as ts-node wrote it: tap maps V8's coverage of the output
 * back to the TypeScript through that map. The output is cached by a hash of everything it
 * depends on (TypeScript's version, tsconfig.json, this file, the path and the source), so a
 * cached output is never stale and no process loads TypeScript once the cache is warm.
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const cacheDir = join(root, 'node_modules/.cache/fastify-tablecrud/typescript')
const require = createRequire(import.meta.url)
const tsconfig = readFileSync(join(root, 'tsconfig.json'), 'utf8')
const seed = [
  JSON.parse(readFileSync(require.resolve('typescript/package.json'), 'utf8')).version,
  tsconfig,
  readFileSync(fileURLToPath(import.meta.url), 'utf8')
].join('\0')

/**
 * NodeNext imports name the output (`./table.js`): where only the TypeScript is there, load it. A
 * JavaScript file that is there wins, as with ts-node (test/plugins/openapi-clients.test.ts
 * transpiles generated clients beside their sources).
 */
export async function resolve (specifier, context, nextResolve) {
  if (specifier.endsWith('.js') && (specifier.startsWith('.') || specifier.startsWith('file:')) &&
      context.parentURL?.startsWith('file:')) {
    const url = new URL(specifier, context.parentURL)
    const typescript = new URL(specifier.slice(0, -3) + '.ts', context.parentURL)
    if (!existsSync(url) && existsSync(typescript)) return { url: typescript.href, format: 'module', shortCircuit: true }
  }
  return nextResolve(specifier, context)
}

export async function load (url, context, nextLoad) {
  if (!url.startsWith('file:') || !new URL(url).pathname.endsWith('.ts')) return nextLoad(url, context)
  const path = fileURLToPath(url)
  const source = readFileSync(path, 'utf8')
  const cached = join(cacheDir, createHash('sha256').update(seed).update('\0' + path + '\0' + source).digest('hex') + '.js')
  let output
  try {
    output = readFileSync(cached, 'utf8')
  } catch {
    output = transpile(path, source)
    mkdirSync(cacheDir, { recursive: true })
    const temporary = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`
    writeFileSync(temporary, output)
    renameSync(temporary, cached)
  }
  return { format: 'module', source: output, shortCircuit: true }
}

let compiler
function transpile (path, source) {
  compiler ??= loadCompiler()
  const { ts, options } = compiler
  const { outputText, sourceMapText } = ts.transpileModule(source, { fileName: path, compilerOptions: options })
  const map = JSON.parse(sourceMapText)
  map.file = path
  map.sources = [path]
  delete map.sourceRoot
  const code = outputText.slice(0, outputText.lastIndexOf('//# sourceMappingURL='))
  return `${code}//# sourceMappingURL=data:application/json;charset=utf-8;base64,${Buffer.from(JSON.stringify(map)).toString('base64')}`
}

function loadCompiler () {
  const ts = require('typescript')
  const { config } = ts.parseConfigFileTextToJson('tsconfig.json', tsconfig)
  const { options } = ts.convertCompilerOptionsFromJson(config.compilerOptions, root)
  return {
    ts,
    options: {
      ...options,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      noEmit: false,
      declaration: false,
      sourceMap: true,
      inlineSourceMap: false,
      inlineSources: true
    }
  }
}
