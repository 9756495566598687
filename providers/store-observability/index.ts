import type { ProviderFactory } from '../../core/provider.ts';
import { storeObservability } from './provider.ts';

export const providers: ProviderFactory[] = [storeObservability as ProviderFactory];
