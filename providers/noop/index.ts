import type { ProviderFactory } from '../../core/provider.ts';
import { noopAuth } from './auth.ts';
import { noopLlm } from './llm.ts';
import { noopBrowser } from './browser.ts';
import { noopTools } from './tools.ts';
import { noopCodeInterpreter } from './code-interpreter.ts';
import { noopIdentity } from './identity.ts';
import { noopPolicy } from './policy.ts';
import { noopEvaluations } from './evaluations.ts';
import { noopObservability } from './observability.ts';
import { noopScanner } from './scanners.ts';

export const providers: ProviderFactory[] = [
  noopAuth as ProviderFactory,
  noopLlm as ProviderFactory,
  noopBrowser as ProviderFactory,
  noopTools as ProviderFactory,
  noopCodeInterpreter as ProviderFactory,
  noopIdentity as ProviderFactory,
  noopPolicy as ProviderFactory,
  noopEvaluations as ProviderFactory,
  noopObservability as ProviderFactory,
  noopScanner as ProviderFactory,
];
