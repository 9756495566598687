import type { ProviderFactory } from '../../core/provider.ts';
import { noopAuth } from './auth.ts';

export const providers: ProviderFactory[] = [noopAuth as ProviderFactory];
