import type { ProviderFactory } from '../../core/provider.ts';
import { heuristicScanner } from './heuristic.ts';
import { llmKeysScanner, llmScanner } from './llm.ts';
import { specScanner } from './spec.ts';
import { staticScanner } from './static.ts';
import { yaraScanner } from './yara.ts';

/** Registry scanners. `behavioral`, `reputation` and `cloud-analysis` are not here: the registry reports them unavailable. */
export const providers: ProviderFactory[] = [
  yaraScanner as ProviderFactory,
  heuristicScanner as ProviderFactory,
  specScanner as ProviderFactory,
  staticScanner as ProviderFactory,
  llmScanner as ProviderFactory,
  llmKeysScanner as ProviderFactory,
];
