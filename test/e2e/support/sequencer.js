// The end-to-end files share one cluster and run in a fixed order: product.test.ts installs and
// exercises the chart with stand-ins for the gateway controllers; dataplane.test.ts then removes
// that release and runs the real data plane, which stays installed until the run ends;
// routing.test.ts then sends traffic through it to its own stand-ins, and observability.test.ts
// reads its metrics. Other projects keep Jest's own order (the sort below is stable and ranks
// their files alike).
const Sequencer = require('@jest/test-sequencer').default;

const ORDER = ['/test/e2e/product.test.ts', '/test/e2e/dataplane.test.ts', '/test/e2e/routing.test.ts', '/test/e2e/observability.test.ts'];

class E2eSequencer extends Sequencer {
  sort(tests) {
    const rank = (t) => {
      const i = ORDER.findIndex((suffix) => t.path.endsWith(suffix));
      return i < 0 ? -1 : i;
    };
    return [...super.sort(tests)].sort((a, b) => rank(a) - rank(b));
  }
}

module.exports = E2eSequencer;
