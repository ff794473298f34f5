/**
 * Preload for generate.ts: openapi-typescript builds its output with the
 * TypeScript 5 compiler API (`ts.factory`), which TypeScript 7, the project's
 * typechecker, no longer ships. `typescript5` (a dev dependency aliasing
 * typescript@5) is handed to it in place of `typescript`.
 */
import { plugin } from 'bun'

const ts5 = require.resolve('typescript5')
plugin({
  name: 'typescript5',
  setup(build) {
    build.onLoad({ filter: /node_modules\/typescript\/lib\/version\.cjs$/ }, () => ({
      contents: `import ts from ${JSON.stringify(ts5)}; export default ts; export * from ${JSON.stringify(ts5)}`,
      loader: 'js',
    }))
  },
})
