import t from 'tap';
import { noopBrowser } from '../../providers/noop/browser.ts';
import type { ProviderContext } from '../../core/provider.ts';
import { BROWSER_CASES, browserSuite } from '../conformance/browser.ts';
import type { Runner } from '../conformance/kit.ts';

// noop ignores its context; the suite only needs a fresh instance per case.
const ctx = {} as ProviderContext;

t.test('noop browser passes the browser conformance suite', async (t) => {
  // tap's overloaded `test` does not match the kit's Runner signature in TypeScript; at runtime it is the same.
  await browserSuite(t as unknown as Runner, {
    make: async () => noopBrowser.create('noop', {}, ctx),
    skip: [
      {
        reason:
          'noop keeps session records only; page actions need a real browser (capabilities navigation, screenshots, evaluate, live_view are false)',
        tests: [
          BROWSER_CASES.navigate,
          BROWSER_CASES.interact,
          BROWSER_CASES.screenshot,
          BROWSER_CASES.failedAction,
          BROWSER_CASES.liveView,
          BROWSER_CASES.evaluateThrows,
          BROWSER_CASES.info,
        ],
      },
    ],
  });
});
