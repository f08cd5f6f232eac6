/**
 * The environment for a child process that runs this checkout's TypeScript through tsx: `env`,
 * with coverage off. tap records coverage in every descendant process (its NODE_OPTIONS loads
 * @tapjs/processinfo), and its report (c8) merges the raw V8 byte ranges of all processes per
 * file before it applies one source map. tsx compiles a file to other offsets than the tests'
 * loader (TypeScript's), so a tsx child's ranges land on the wrong lines and files that every test runs read
 * as uncovered (docs/testing.md). What such a child runs is measured in-process by other tests.
 */
export const unmeasured = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv =>
  ({ ...env, _TAPJS_PROCESSINFO_COVERAGE_: '0' })
