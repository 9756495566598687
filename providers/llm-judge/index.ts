import type { ProviderFactory } from '../../core/provider.ts';
import { llmJudgeEvaluations } from './provider.ts';

export const providers: ProviderFactory[] = [llmJudgeEvaluations as ProviderFactory];
