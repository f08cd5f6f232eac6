import t from 'tap'
import { allowSources, directiveName, directivesProblem, policyOf, sourcesProblem } from '../../../lib/web/csp.js'

t.test('policyOf writes default-src, the directives in order, then report-uri', async (t) => {
  t.equal(policyOf({}), "default-src 'self'")
  t.equal(policyOf({ reportUri: '/csp-report' }), "default-src 'self'; report-uri /csp-report")
  t.equal(policyOf({ defaultSrc: ["'self'", 'https://cdn.example.org'], directives: { imgSrc: ["'self'", 'data:'], 'frame-ancestors': "'none'" }, reportUri: 'https://r.example/x' }),
    "default-src 'self' https://cdn.example.org; img-src 'self' data:; frame-ancestors 'none'; report-uri https://r.example/x")
  t.equal(directiveName('scriptSrcElem'), 'script-src-elem')
  t.equal(directiveName('upgrade-insecure-requests'), 'upgrade-insecure-requests')
})

t.test('sourcesProblem and directivesProblem', async (t) => {
  t.equal(sourcesProblem("'self'"), null)
  t.equal(sourcesProblem(['a', 'b']), null)
  t.equal(sourcesProblem([]), 'must be a source or a non-empty array of sources')
  t.equal(sourcesProblem(3), 'must be a source or a non-empty array of sources')
  t.equal(sourcesProblem(['a;b']), 'must hold non-empty sources without ; , or line breaks')
  t.equal(sourcesProblem(' '), 'must hold non-empty sources without ; , or line breaks')
  t.equal(sourcesProblem(['a', 1]), 'must hold non-empty sources without ; , or line breaks')
  t.equal(directivesProblem({ imgSrc: 'data:' }), null)
  t.equal(directivesProblem([]), 'must be an object of directive: sources')
  t.equal(directivesProblem(null), 'must be an object of directive: sources')
  t.equal(directivesProblem({ 'img src': 'x' }), 'has "img src", which is not a directive name')
  t.equal(directivesProblem({ defaultSrc: 'x' }), 'cannot set default-src: use the defaultSrc option')
  t.equal(directivesProblem({ 'report-uri': 'x' }), 'cannot set report-uri: use the reportUri option')
  t.equal(directivesProblem({ imgSrc: 'a,b' }), 'imgSrc must hold non-empty sources without ; , or line breaks')
})

t.test('allowSources extends one directive for the Swagger UI page', async (t) => {
  const cases: Array<[string, string, string[], string]> = [
    ["default-src 'self'", 'img-src', ['data:'], "default-src 'self'; img-src 'self' data:"],
    ["default-src 'self'; report-uri /r", 'img-src', ['data:'], "default-src 'self'; img-src 'self' data:; report-uri /r"],
    ["default-src 'self'; img-src https://i.example", 'img-src', ['data:'], "default-src 'self'; img-src https://i.example data:"],
    ["default-src 'self'; img-src 'self' data:", 'img-src', ['data:'], "default-src 'self'; img-src 'self' data:"],
    ["default-src 'self'; img-src *", 'img-src', ['data:'], "default-src 'self'; img-src *"],
    ["default-src 'none'", 'img-src', ['data:'], "default-src 'none'; img-src data:"],
    ["default-src 'self'; img-src 'none'", 'img-src', ['data:'], "default-src 'self'; img-src data:"],
    ['frame-ancestors x', 'img-src', ['data:'], 'frame-ancestors x'],
    ["default-src 'self'", 'style-src', ["'sha256-x'"], "default-src 'self'; style-src 'self' 'sha256-x'"],
    ["default-src 'self'; style-src 'self' 'unsafe-inline'", 'style-src', ["'sha256-x'"], "default-src 'self'; style-src 'self' 'unsafe-inline'"],
    ["default-src 'self' 'unsafe-inline'", 'style-src', ["'sha256-x'"], "default-src 'self' 'unsafe-inline'"],
    ["default-src 'self';; Style-Src 'self' ", 'style-src', ["'sha256-x'"], "default-src 'self'; style-src 'self' 'sha256-x'"]
  ]
  for (const [policy, name, extra, expected] of cases) t.equal(allowSources(policy, name, extra), expected, `${policy} + ${name} ${extra.join(' ')}`)
})
