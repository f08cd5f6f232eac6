import t from 'tap'
import { excludedPathsProblem, pathMatcher } from '../../../lib/auth/paths.js'

t.test('exact entries and * prefixes, on the path without its query string', async (t) => {
  const excluded = pathMatcher(['/health', '/docs/*', '/static*'])
  const cases: Array<[string, boolean]> = [
    ['/health', true],
    ['/health?full=1', true],
    ['/health/', false],
    ['/healthz', false],
    ['/Health', false],
    ['/docs/', true],
    ['/docs/json', true],
    ['/docs/a/b?c', true],
    ['/docs', false],
    ['/docs?x=/docs/', false],
    ['/static', true],
    ['/staticfiles/a', true],
    ['/api/health', false],
    ['/%68ealth', false]
  ]
  for (const [url, expected] of cases) t.equal(excluded(url), expected, url)
  t.equal(pathMatcher([])('/'), false, 'no entries, nothing excluded')
  t.equal(pathMatcher(['/*'])('/anything'), true)
})

t.test('excludedPathsProblem names the bad entry', async (t) => {
  t.equal(excludedPathsProblem([]), null)
  t.equal(excludedPathsProblem(['/a', '/b/*']), null)
  t.equal(excludedPathsProblem('/a'), 'must be an array of paths')
  t.equal(excludedPathsProblem(['a']), 'has "a", which is not a path starting with /')
  t.equal(excludedPathsProblem([42]), 'has 42, which is not a path starting with /')
  t.equal(excludedPathsProblem(['/*/a']), 'has "/*/a": * is allowed only at the end')
  t.equal(excludedPathsProblem(['/a**']), 'has "/a**": * is allowed only at the end')
})
