import type { ProviderFactory } from '../../core/provider.ts';
import { inMemoryMemory, keyvMemory } from './memory-provider.ts';

export const providers: ProviderFactory[] = [inMemoryMemory as ProviderFactory, keyvMemory as ProviderFactory];
