import type { ProviderFactory } from '../../core/provider.ts';
import { apiKeyAuth } from './api-key.ts';
import { jwtAuth } from './jwt.ts';

export const providers: ProviderFactory[] = [apiKeyAuth as ProviderFactory, jwtAuth as ProviderFactory];
