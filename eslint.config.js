import neostandard from 'neostandard'

export default [
  ...neostandard({
    ts: true,
    ignores: ['dist/**', 'coverage/**', '.tap/**', 'bench/.build/**', '.bench-now/**']
  }),
  {
    // House rules (STYLE.md): no function over about 60 lines, no deep nesting. Tests are
    // tables of cases and exempt.
    files: ['**/*.ts', '**/*.js', '**/*.mjs'],
    ignores: ['test/**'],
    rules: {
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
      'max-depth': ['error', 4]
    }
  }
]
